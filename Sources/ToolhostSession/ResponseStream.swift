extension LanguageModelSession {
  /// A request's progress as an asynchronous sequence of snapshots.
  public struct ResponseStream: AsyncSequence, Sendable {
    /// The state after one event.
    public struct Snapshot: Sendable {
      /// The current model turn's text so far.
      public var content: String
      /// What just happened.
      public var event: SessionEvent
    }

    /// The element type.
    public typealias Element = Snapshot

    let stream: AsyncThrowingStream<Snapshot, any Error>
    let task: Task<Response, any Error>

    init(_ stream: AsyncThrowingStream<Snapshot, any Error>, task: Task<Response, any Error>) {
      self.stream = stream
      self.task = task
    }

    /// Makes an iterator. Iterating from a task that is cancelled ends the iteration and cancels the request.
    public func makeAsyncIterator() -> AsyncThrowingStream<Snapshot, any Error>.Iterator {
      stream.makeAsyncIterator()
    }

    /// Waits for the request to end and returns its response, without iterating the snapshots (observers still
    /// see every event).
    ///
    /// Cancelling the calling task cancels the request; this returns only once the request has wound down (tools
    /// stopped, transcript restored), so the session is free again.
    /// - Throws: what the request throws.
    public func collect() async throws -> Response {
      try await withTaskCancellationHandler {
        try await task.value
      } onCancel: {
        task.cancel()
      }
    }
  }
}
