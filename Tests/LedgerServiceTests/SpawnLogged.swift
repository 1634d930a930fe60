import Foundation
import LedgerTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Starts `arguments` (the first found on PATH when not a path) with stdin from
/// /dev/null and stdout and stderr into `log`, as it would start from a shell: no
/// signal blocked, SIGTERM and SIGINT at their defaults. (The test's own thread may
/// block them: libdispatch's workers block almost every signal, and a child inherits
/// the mask of the thread that spawns it.) Returns the child's pid.
func spawnLogged(_ arguments: [String], environment: [String: String], log: String) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGTERM)
    sigaddset(&defaults, SIGINT)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var child: pid_t = 0
    let spawned = posix_spawnp(&child, arguments[0], &actions, &attributes, argv, envp)
    guard spawned == 0 else { throw ClientError.io("cannot start \(arguments[0]): errno \(spawned)") }
    return child
}
