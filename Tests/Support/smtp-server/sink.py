"""A real SMTP server for the server's mail tests (aiosmtpd, from PyPI: nobody here wrote it).

    python3 sink.py PORT DIR [CERT KEY]

Listens on 127.0.0.1:PORT and writes each message it accepts to DIR/<n>.eml (the envelope's
recipients in DIR/<n>.rcpt), then prints "ready" once listening. With CERT and KEY (PEM files),
it offers STARTTLS and requires it before AUTH. Any AUTH PLAIN login whose password is
"smtp-secret" is accepted; AUTH is optional. Recipients whose address starts with "refused"
are refused (550, naming the address); a mail to one starting with "slow" is answered after
1.5 s. Runs until killed.
"""
import asyncio
import os
import signal
import ssl
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

# A test process may ignore or block SIGTERM, and children inherit both: stop when told to.
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
port, directory = int(sys.argv[1]), sys.argv[2]
tls = None
if len(sys.argv) > 4:
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(sys.argv[3], sys.argv[4])
os.makedirs(directory, exist_ok=True)


class Sink:
    def __init__(self):
        self.count = 0

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        # A mailbox that does not exist, as a real server answers it (naming the address).
        if address.startswith("refused"):
            return f"550 5.1.1 <{address}>: Recipient address rejected: User unknown"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        # A slow mailbox: the server takes 1.5 s before it answers (a sender that waited shows it).
        if any(r.startswith("slow") for r in envelope.rcpt_tos):
            await asyncio.sleep(1.5)
        self.count += 1
        base = os.path.join(directory, str(self.count))
        with open(base + ".rcpt", "w") as f:
            f.write("\n".join(envelope.rcpt_tos) + "\n")
        with open(base + ".tmp", "wb") as f:
            f.write(envelope.original_content or envelope.content)
        os.rename(base + ".tmp", base + ".eml")
        return "250 Message accepted"


def authenticate(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and auth_data.password == b"smtp-secret"
    return AuthResult(success=ok, handled=False)


controller = Controller(
    Sink(), hostname="127.0.0.1", port=port, tls_context=tls, require_starttls=tls is not None,
    authenticator=authenticate, auth_require_tls=tls is not None, auth_required=False)
controller.start()
print("ready", flush=True)
try:
    asyncio.new_event_loop().run_forever()
finally:
    controller.stop()
