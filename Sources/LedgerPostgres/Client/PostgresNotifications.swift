import CPostgres
import Foundation

/// LISTEN/NOTIFY on one connection: PostgreSQL delivers a notification to every
/// listening session when the transaction that sent it commits.
extension PostgresConnection {
    /// Subscribes this session to `channel`: lowercase letters, digits and `_` (PostgreSQL
    /// folds an unquoted name to lowercase, and `pg_notify` takes it as written).
    public func listen(_ channel: String) throws {
        guard !channel.isEmpty, channel.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || ($0 >= 48 && $0 <= 57)
                || ($0 >= 97 && $0 <= 122) }) else {
            throw PostgresError.unexpectedResult("not a channel name (lowercase letters, digits and _): \(channel)")
        }
        try query("LISTEN " + channel)
    }

    /// Waits up to `timeoutSeconds` for notifications and returns the channels of those
    /// that arrived (empty when none did). Throws `.connectionLost` when the server went away.
    public func awaitNotifications(timeoutSeconds: Double) throws -> [String] {
        guard let conn else { throw PostgresError.connectionLost("the connection is closed") }
        var channels = Self.drainNotifications(conn)
        if !channels.isEmpty { return channels }
        var descriptor = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
        let seconds = timeoutSeconds.isFinite ? max(0, min(timeoutSeconds, 60)) : 60
        let ready = poll(&descriptor, 1, Int32((seconds * 1000).rounded()))
        if ready < 0 && errno != EINTR {
            throw PostgresError.connectionLost("poll on the listening connection failed: errno \(errno)")
        }
        if ready > 0 {
            guard PQconsumeInput(conn) == 1, PQstatus(conn) == CONNECTION_OK else { throw lostOrFailed(conn) }
            channels = Self.drainNotifications(conn)
        } else if PQstatus(conn) != CONNECTION_OK {
            throw lostOrFailed(conn)
        }
        return channels
    }

    private static func drainNotifications(_ conn: OpaquePointer) -> [String] {
        var channels: [String] = []
        while let notification = PQnotifies(conn) {
            channels.append(String(cString: notification.pointee.relname))
            PQfreemem(notification)
        }
        return channels
    }
}
