import Foundation
import Synchronization

/// A mutex-protected value in a class, so callers and an I/O thread can share it.
final class LockedState<Value: Sendable>: Sendable {
  private let mutex: Mutex<Value>

  init(_ value: Value) { mutex = Mutex(value) }

  func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R {
    mutex.withLock { body(&$0) }
  }
}

/// Every persistent process still running, for the `atexit` clean-up.
final class LiveProcesses: Sendable {
  static let shared = LiveProcesses()
  private let processes = Mutex<[ObjectIdentifier: PersistentProcess]>([:])
  private let installed = Atomic<Bool>(false)

  func add(_ p: PersistentProcess) {
    processes.withLock { $0[ObjectIdentifier(p)] = p }
    if installed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
      .exchanged
    {
      atexit { PersistentProcess.shutdownAll() }
    }
  }

  func remove(_ p: PersistentProcess) {
    _ = processes.withLock { $0.removeValue(forKey: ObjectIdentifier(p)) }
  }

  func snapshot() -> [PersistentProcess] { processes.withLock { Array($0.values) } }
}
