import Foundation
import Synchronization

/// One process of a persistent plugin, serving one request at a time: a request line in, a reply line out.
package final class PersistentWorker: Sendable {
  /// How a request ended.
  package enum Outcome: Sendable {
    /// The reply line.
    case reply([UInt8])
    /// The time limit passed; the process is being ended.
    case timedOut
    /// The calling task was cancelled; the process is being ended.
    case cancelled
    /// The process ended before it replied.
    case ended(PersistentProcess.Exit)
  }

  final class Core: Sendable {
    struct State {
      var pending: OneShot<Outcome>?
      var stderrSink: (@Sendable ([UInt8]) -> Void)?
      var exit: PersistentProcess.Exit?
      var broken = false
      var strayLines = 0
    }
    let state = Mutex(State())

    func line(_ bytes: [UInt8]) {
      let pending = state.withLock { s -> OneShot<Outcome>? in
        defer { s.pending = nil }
        if s.pending == nil { s.strayLines += 1 }
        return s.pending
      }
      pending?.complete(.reply(bytes))
    }

    func stderr(_ chunk: [UInt8]) {
      state.withLock { $0.stderrSink }?(chunk)
    }

    func exited(_ exit: PersistentProcess.Exit) {
      let pending = state.withLock { s -> OneShot<Outcome>? in
        s.exit = exit
        defer { s.pending = nil }
        return s.pending
      }
      pending?.complete(.ended(exit))
    }
  }

  package let process: PersistentProcess
  let core: Core

  private init(process: PersistentProcess, core: Core) {
    self.process = process
    self.core = core
  }

  /// Starts a process.
  ///
  /// - Throws: ``ProcessLaunchError`` when it cannot be started.
  static func launch(_ spec: PersistentProcessSpec) throws(ProcessLaunchError) -> PersistentWorker {
    let core = Core()
    let process = try PersistentProcess.launch(
      spec,
      handlers: .init(
        onLine: { core.line($0) }, onStderr: { core.stderr($0) }, onExit: { core.exited($0) }))
    return PersistentWorker(process: process, core: core)
  }

  /// Marks the worker unusable and ends its process (it will be replaced).
  package func retire() {
    core.state.withLock { $0.broken = true }
    process.terminate()
  }

  /// Whether the worker can take another request: its process runs and no call of it was abandoned.
  var isUsable: Bool { core.state.withLock { $0.exit == nil && !$0.broken } && process.isRunning }

  /// Sends one request line and waits for the reply line, the time limit, cancellation or the process's end.
  ///
  /// The reply is held to `outputLimit` bytes: a longer one ends the process, with the stop reason
  /// `.outputTooLarge`. On a time limit or cancellation the process group is ended (SIGTERM, then SIGKILL)
  /// and the worker is no longer usable.
  package func call(
    _ request: [UInt8], timeout: Duration?, outputLimit: Int, onStderr: (@Sendable ([UInt8]) -> Void)?
  ) async -> Outcome {
    let box = OneShot<Outcome>()
    let early = core.state.withLock { s -> Outcome? in
      if let exit = s.exit { return .ended(exit) }
      s.pending = box
      s.stderrSink = onStderr
      return nil
    }
    if let early { return early }
    process.setOutputLimit(outputLimit)
    var line = request
    line.append(0x0A)
    // The time limit is the process's alarm, kept by its I/O thread (no timer thread involved).
    let alarm = process.send(line, alarmAfter: timeout ?? .seconds(86400 * 365)) { [self] in
      abandon(box, .timedOut)
    }
    let outcome = await withTaskCancellationHandler {
      await box.wait()
    } onCancel: {
      abandon(box, .cancelled)
    }
    if let alarm { process.cancelAlarm(alarm) }
    core.state.withLock { $0.stderrSink = nil }
    return outcome
  }

  private func abandon(_ box: OneShot<Outcome>, _ outcome: Outcome) {
    guard box.complete(outcome) else { return }
    core.state.withLock { s in
      s.broken = true
      if s.pending === box { s.pending = nil }
    }
    process.terminate()
  }
}

/// The processes of one persistent plugin: up to `size` of them, each serving one call at a time, started when
/// calls need them and replaced when they die or time out.
public final class PersistentPool: Sendable {
  enum Grant: Sendable {
    case worker(PersistentWorker)
    case spawn
    case closed
    case timedOut
    case cancelled
  }

  struct State {
    var idle: [PersistentWorker] = []
    var all: [ObjectIdentifier: PersistentWorker] = [:]
    var live = 0
    var waiters: [(id: Int, grant: OneShot<Grant>)] = []
    var nextWaiter = 0
    var closed = false
  }

  /// What each process runs.
  public let spec: PersistentProcessSpec
  /// The most processes running at once.
  public let size: Int
  let state = Mutex(State())

  /// Makes an empty pool; nothing is started until a call needs it.
  public init(spec: PersistentProcessSpec, size: Int) {
    self.spec = spec
    self.size = max(1, size)
  }

  /// The process ids of the processes running now.
  public var processIDs: [Int32] {
    state.withLock { $0.all.values.filter { $0.process.isRunning }.map(\.process.pid) }.sorted()
  }

  /// Takes an idle process, starts one, or waits for one until `deadline`.
  package func acquire(deadline: ContinuousClock.Instant?) async throws(PoolError) -> PersistentWorker {
    let (immediate, queued) = state.withLock { s -> (Grant?, OneShot<Grant>?) in
      if s.closed { return (.closed, nil) }
      while let w = s.idle.popLast() {
        if w.isUsable { return (.worker(w), nil) }
        s.all[ObjectIdentifier(w)] = nil
        s.live -= 1
      }
      if s.live < size {
        s.live += 1
        return (.spawn, nil)
      }
      let waiter = OneShot<Grant>()
      s.nextWaiter += 1
      s.waiters.append((s.nextWaiter, waiter))
      return (nil, waiter)
    }
    var grant: Grant
    if let immediate {
      grant = immediate
    } else if let waiter = queued {
      // The time limit is a Dispatch work item, not a sleeping task: a call that queues for a worker is the hot
      // path of a busy pool (tens of µs a call), and a task per wait cost two more jobs on the two-thread
      // cooperative pool (start, then wake on cancel): 8 calls in flight on a pool of 2 lost about a quarter of
      // their throughput. The work item runs on Dispatch's own threads and is cancelled when a grant comes first.
      let timer = deadline.map { deadline in
        let item = DispatchWorkItem { [self] in withdraw(waiter, .timedOut) }
        let left = max(.zero, ContinuousClock.now.duration(to: deadline))
        DispatchQueue.global().asyncAfter(deadline: .now() + left.seconds, execute: item)
        return item
      }
      grant = await withTaskCancellationHandler {
        await waiter.wait()
      } onCancel: {
        withdraw(waiter, .cancelled)
      }
      timer?.cancel()
    } else {
      grant = .closed
    }
    switch grant {
    case .worker(let w): return w
    case .closed: throw .closed
    case .timedOut: throw .timedOut
    case .cancelled: throw .cancelled
    case .spawn:
      do {
        let w = try PersistentWorker.launch(spec)
        let closed = state.withLock { s -> Bool in
          s.all[ObjectIdentifier(w)] = w
          return s.closed
        }
        if closed {
          w.process.terminate()
          throw PoolError.closed
        }
        return w
      } catch let error as ProcessLaunchError {
        slotFreed()
        throw .launchFailed(error)
      } catch {
        throw .closed
      }
    }
  }

  /// Removes a waiter that gave up; if a grant reached it at the same moment, passes the grant on.
  private func withdraw(_ waiter: OneShot<Grant>, _ why: Grant) {
    state.withLock { s in s.waiters.removeAll { $0.grant === waiter } }
    if !waiter.complete(why) {
      // Too late: it was granted something at the same moment; nobody will use it, so pass it on.
      switch waiter.value {
      case .worker(let w): release(w)
      case .spawn: slotFreed()
      default: break
      }
    }
  }

  /// Gives a worker back after a call: to the next waiter, to the idle list, or (when it cannot be used again) its
  /// slot to the next waiter.
  package func release(_ worker: PersistentWorker) {
    if !worker.isUsable {
      worker.process.terminate()
      state.withLock { s in
        s.all[ObjectIdentifier(worker)] = nil
      }
      slotFreed()
      return
    }
    let next = state.withLock { s -> (OneShot<Grant>?, Bool) in
      if s.closed { return (nil, true) }
      if !s.waiters.isEmpty { return (s.waiters.removeFirst().grant, false) }
      s.idle.append(worker)
      return (nil, false)
    }
    if next.1 {
      Task { await worker.process.shutdown(grace: .seconds(1)) }
    } else if let waiter = next.0, !waiter.complete(.worker(worker)) {
      release(worker)
    }
  }

  private func slotFreed() {
    let next = state.withLock { s -> OneShot<Grant>? in
      s.live -= 1
      guard !s.closed, !s.waiters.isEmpty else { return nil }
      s.live += 1
      return s.waiters.removeFirst().grant
    }
    if let next, !next.complete(.spawn) { slotFreed() }
  }

  /// Ends every process: closes their stdin, gives them `grace` to exit, then ends their process groups. Calls
  /// still waiting fail; later calls fail too.
  public func shutdown(grace: Duration = .seconds(1)) async {
    let (workers, waiters) = state.withLock { s -> ([PersistentWorker], [OneShot<Grant>]) in
      s.closed = true
      defer {
        s.waiters = []
        s.idle = []
      }
      return (Array(s.all.values), s.waiters.map(\.grant))
    }
    for w in waiters { w.complete(.closed) }
    await withTaskGroup(of: Void.self) { group in
      for w in workers { group.addTask { await w.process.shutdown(grace: grace) } }
    }
  }

  /// Why no process could be had.
  package enum PoolError: Error, Sendable {
    case launchFailed(ProcessLaunchError)
    case timedOut
    case cancelled
    case closed
  }
}
