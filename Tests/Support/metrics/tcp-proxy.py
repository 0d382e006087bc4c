#!/usr/bin/env python3
"""A TCP proxy for the tests: stopping it is, to a client, the server going away.

    tcp-proxy.py LISTEN_PORT TARGET_HOST TARGET_PORT    (LISTEN_PORT 0: any; prints the port)
"""
import asyncio
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except Exception:
        pass
    finally:
        writer.close()


async def main():
    target_host, target_port = sys.argv[2], int(sys.argv[3])

    async def handle(reader, writer):
        try:
            up_reader, up_writer = await asyncio.open_connection(target_host, target_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    server = await asyncio.start_server(handle, "127.0.0.1", int(sys.argv[1]), reuse_address=True)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
