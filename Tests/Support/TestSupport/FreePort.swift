import Foundation

/// A TCP port for a server a test starts: one that nothing listens on now, picked at random below
/// the kernel's ephemeral range (32768 up here), where any client connection may hold a port.
/// A port there can be taken by a connection between the pick and the server's bind; it was,
/// once in a full run. The port after it is free too, for a second listener (`--metrics-port`).
public func freePort() -> Int {
    for _ in 0..<100 {
        let port = Int.random(in: 20_000..<32_000)
        if bindable(port), bindable(port + 1) { return port }
    }
    return Int.random(in: 20_000..<32_000)
}

private func bindable(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}
