/// Runs `operation` for each index of `0..<count`, at most `width` at a time, and hands each result to `collect` on
/// the calling task as soon as it is ready (in completion order). Cancelling the calling task cancels the operations
/// still running; `collect` still gets what they return. Does not throw.
package func withBoundedConcurrency<Value: Sendable>(
  _ count: Int, width: Int, _ operation: @escaping @Sendable (Int) async -> Value,
  collect: (Int, Value) -> Void
) async {
  await withTaskGroup(of: (Int, Value).self) { group in
    var next = 0
    func start() {
      let index = next
      next += 1
      group.addTask { (index, await operation(index)) }
    }
    while next < count && next < max(1, width) { start() }
    for await (index, value) in group {
      collect(index, value)
      if next < count { start() }
    }
  }
}
