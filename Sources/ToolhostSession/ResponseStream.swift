public import ToolhostGeneration

extension LanguageModelSession {
  /// A request's progress as an asynchronous sequence of snapshots (FoundationModels' `ResponseStream`).
  ///
  /// For text (`ResponseStream<String>`) there is a snapshot for every ``SessionEvent``, its ``Snapshot/content``
  /// the current model turn's text so far. For a generated type, there is a snapshot each time more of the value
  /// has arrived, its content the value so far (`Content.PartiallyGenerated`, every property optional).
  public struct ResponseStream<Content: Generable>: AsyncSequence {
    /// The state after one event.
    public struct Snapshot {
      /// The value so far: for text, the current model turn's text; for a generated type, its partial value.
      public var content: Content.PartiallyGenerated
      /// The value so far as generated content (text as a string).
      public var rawContent: GeneratedContent
      /// What just happened.
      public var event: SessionEvent
    }

    /// The element type.
    public typealias Element = Snapshot

    let stream: AsyncThrowingStream<RawSnapshot, any Error>
    let task: Task<RawResponse, any Error>
    let snapshot: @Sendable (RawSnapshot) -> Snapshot?
    let response: @Sendable (RawResponse) throws -> Response<Content>

    init(
      _ stream: AsyncThrowingStream<RawSnapshot, any Error>, task: Task<RawResponse, any Error>,
      snapshot: @escaping @Sendable (RawSnapshot) -> Snapshot?,
      response: @escaping @Sendable (RawResponse) throws -> Response<Content>
    ) {
      self.stream = stream
      self.task = task
      self.snapshot = snapshot
      self.response = response
    }

    /// Iterates the snapshots.
    public struct AsyncIterator: AsyncIteratorProtocol {
      var base: AsyncThrowingStream<RawSnapshot, any Error>.Iterator
      let snapshot: @Sendable (RawSnapshot) -> Snapshot?

      /// The next snapshot, or `nil` at the end. Iterating from a task that is cancelled ends the iteration and
      /// cancels the request.
      public mutating func next() async throws -> Snapshot? {
        while let raw = try await base.next() {
          if let converted = snapshot(raw) { return converted }
        }
        return nil
      }
    }

    /// Makes an iterator.
    public func makeAsyncIterator() -> AsyncIterator {
      AsyncIterator(base: stream.makeAsyncIterator(), snapshot: snapshot)
    }

    /// Waits for the request to end and returns its response, without iterating the snapshots (observers still
    /// see every event).
    ///
    /// Cancelling the calling task cancels the request; this returns only once the request has wound down (tools
    /// stopped, transcript restored), so the session is free again.
    /// - Throws: what the request throws.
    public func collect() async throws -> Response<Content> {
      let raw = try await withTaskCancellationHandler {
        try await task.value
      } onCancel: {
        task.cancel()
      }
      return try response(raw)
    }
  }

  /// A snapshot as the request's task yields it, before it is converted into the caller's type.
  struct RawSnapshot: Sendable {
    /// The current model turn's text so far.
    var text: String
    /// The value so far, when a generated type is being streamed and some of it has arrived.
    var content: GeneratedContent?
    /// What just happened.
    var event: SessionEvent
  }

  /// A request's result before it is converted into the caller's type.
  struct RawResponse: Sendable {
    /// The answer's text (the JSON of a generated value).
    var text: String
    /// The answer as generated content (a string for text).
    var content: GeneratedContent
    /// The entries the request added.
    var entries: ArraySlice<Transcript.Entry>

    /// The response as text.
    var textResponse: Response<String> {
      Response(content: text, rawContent: content, transcriptEntries: entries)
    }

    /// The response as a generated type.
    func response<Content: Generable>(as type: Content.Type) throws -> Response<Content> {
      Response(content: try Content(content), rawContent: content, transcriptEntries: entries)
    }
  }
}

extension LanguageModelSession.ResponseStream: Sendable {}
