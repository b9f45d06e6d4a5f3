import Foundation

/// Runs blocking `work` (file reads, waits on other threads) on a new thread and suspends the calling task until it
/// returns, so that no thread of Swift's cooperative pool (two on a two-core machine) blocks.
///
/// The thread is not cancelled with the task: `work` runs to its end, which it must reach by itself.
package func onThreadOfItsOwn<Value: Sendable>(
  name: String, stackSize: Int = 1 << 20, _ work: @escaping @Sendable () -> Value
) async -> Value {
  await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
    let thread = Thread { continuation.resume(returning: work()) }
    thread.name = name
    thread.stackSize = stackSize
    thread.start()
  }
}
