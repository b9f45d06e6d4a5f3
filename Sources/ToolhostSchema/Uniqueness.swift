import ToolhostJSON

/// `uniqueItems`: finding two items that are equal as JSON Schema compares them (`1 == 1.0`, objects unordered).
enum Uniqueness {
  /// Pairwise comparison is used up to this many items; beyond it, items are bucketed by a hash first.
  static let pairwiseLimit = 16

  /// The indices of the first two equal items, or `nil` when all are distinct.
  static func firstDuplicate(_ items: [JSONValue]) -> (Int, Int)? {
    if items.count <= pairwiseLimit {
      for j in items.indices {
        for i in 0..<j where Equality.equal(items[i], items[j]) { return (i, j) }
      }
      return nil
    }
    var buckets: [Int: [Int]] = [:]
    buckets.reserveCapacity(items.count)
    for (j, item) in items.enumerated() {
      var hasher = Hasher()
      hash(item, into: &hasher)
      let key = hasher.finalize()
      if let earlier = buckets[key] {
        for i in earlier where Equality.equal(items[i], item) { return (i, j) }
      }
      buckets[key, default: []].append(j)
    }
    return nil
  }

  /// Hashes a value so that values that `Equality.equal` calls equal hash alike: numbers by their `Double` value, object
  /// members without regard to order.
  static func hash(_ value: JSONValue, into hasher: inout Hasher) {
    switch value {
    case .null:
      hasher.combine(0)
    case .bool(let b):
      hasher.combine(1)
      hasher.combine(b)
    case .integer(let i):
      hasher.combine(2)
      hasher.combine(Double(i))
    case .real(let d):
      hasher.combine(2)
      hasher.combine(d)
    case .string(let s):
      hasher.combine(3)
      hasher.combine(s)
    case .array(let items):
      hasher.combine(4)
      hasher.combine(items.count)
      for item in items { hash(item, into: &hasher) }
    case .object(let object):
      hasher.combine(5)
      hasher.combine(object.count)
      var sum = 0
      for key in object.keys {
        var member = Hasher()
        member.combine(key)
        hash(object[key]!, into: &member)
        sum &+= member.finalize()
      }
      hasher.combine(sum)
    }
  }
}
