extension PostgresConnection {
    /// One round trip: throws when the server does not answer.
    package func ping() throws {
        try query("SELECT 1")
    }
}
