import Foundation
import Testing
import ToolhostJSON

// MARK: - Containers

/// Two integers coded as a two-element array.
struct Pair: Codable, Equatable {
  var a: Int
  var b: Int

  init(a: Int, b: Int) {
    self.a = a
    self.b = b
  }

  init(from decoder: any Decoder) throws {
    var c = try decoder.unkeyedContainer()
    a = try c.decode(Int.self)
    b = try c.decode(Int.self)
    guard c.isAtEnd else {
      throw DecodingError.dataCorruptedError(in: c, debugDescription: "extra elements")
    }
  }

  func encode(to encoder: any Encoder) throws {
    var c = encoder.unkeyedContainer()
    try c.encode(a)
    try c.encode(b)
  }
}

/// A shape coded with nested keyed and unkeyed containers.
struct Shape: Codable, Equatable {
  var kind: String
  var points: [Pair]
  var unit: String
  var tags: [[String]]

  enum Keys: String, CodingKey { case kind, geometry, meta }
  enum GeometryKeys: String, CodingKey { case points }
  enum MetaKeys: String, CodingKey { case unit, tags }

  init(kind: String, points: [Pair], unit: String, tags: [[String]]) {
    self.kind = kind
    self.points = points
    self.unit = unit
    self.tags = tags
  }

  init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: Keys.self)
    kind = try c.decode(String.self, forKey: .kind)
    let geometry = try c.nestedContainer(keyedBy: GeometryKeys.self, forKey: .geometry)
    var list = try geometry.nestedUnkeyedContainer(forKey: .points)
    points = []
    while !list.isAtEnd {
      var pair = try list.nestedUnkeyedContainer()
      points.append(Pair(a: try pair.decode(Int.self), b: try pair.decode(Int.self)))
    }
    var meta = try c.nestedUnkeyedContainer(forKey: .meta)
    let unitBox = try meta.nestedContainer(keyedBy: MetaKeys.self)
    unit = try unitBox.decode(String.self, forKey: .unit)
    tags = try meta.decode([[String]].self)
  }

  func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: Keys.self)
    try c.encode(kind, forKey: .kind)
    var geometry = c.nestedContainer(keyedBy: GeometryKeys.self, forKey: .geometry)
    var list = geometry.nestedUnkeyedContainer(forKey: .points)
    for p in points {
      var pair = list.nestedUnkeyedContainer()
      try pair.encode(p.a)
      try pair.encode(p.b)
    }
    var meta = c.nestedUnkeyedContainer(forKey: .meta)
    var unitBox = meta.nestedContainer(keyedBy: MetaKeys.self)
    try unitBox.encode(unit, forKey: .unit)
    try meta.encode(tags)
  }
}

class Animal: Codable {
  var legs: Int
  init(legs: Int) { self.legs = legs }
}

final class Dog: Animal {
  var name: String

  init(name: String, legs: Int) {
    self.name = name
    super.init(legs: legs)
  }

  enum Keys: String, CodingKey { case name, base }

  required init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: Keys.self)
    name = try c.decode(String.self, forKey: .name)
    try super.init(from: c.superDecoder())
  }

  override func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: Keys.self)
    try c.encode(name, forKey: .name)
    try super.encode(to: c.superEncoder())
  }
}

/// Codes its parent's fields under a named key with `superEncoder(forKey:)`, and reads `userInfo`.
struct Tagged: Codable, Equatable {
  var inner: Item
  var flavour: String

  enum Keys: String, CodingKey { case base }
  static let flavourKey = CodingUserInfoKey(rawValue: "flavour")!

  init(inner: Item, flavour: String) {
    self.inner = inner
    self.flavour = flavour
  }

  init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: Keys.self)
    inner = try Item(from: c.superDecoder(forKey: .base))
    flavour = decoder.userInfo[Self.flavourKey] as? String ?? "none"
  }

  func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: Keys.self)
    try inner.encode(to: c.superEncoder(forKey: .base))
    var list = encoder.unkeyedContainer()  // Switching shape replaces what was there.
    try list.encode(1)
    var again = encoder.container(keyedBy: Keys.self)
    try inner.encode(to: again.superEncoder(forKey: .base))
    if let f = encoder.userInfo[Self.flavourKey] as? String { try again.encode(f, forKey: .base) }
  }
}

struct Nothing: Codable {
  init() {}
  init(from decoder: any Decoder) throws {}
  func encode(to encoder: any Encoder) throws {}
}

@Suite("Containers")
struct ContainerTests {
  @Test("nested keyed and unkeyed containers")
  func nested() throws {
    let shape = Shape(
      kind: "poly", points: [Pair(a: 1, b: 2), Pair(a: 3, b: 4)], unit: "m", tags: [["x"], []])
    let value = try JSONValue(encoding: shape)
    #expect(
      value == [
        "kind": "poly", "geometry": ["points": [[1, 2], [3, 4]]],
        "meta": [["unit": "m"], [["x"], []]],
      ])
    #expect(try value.decode(Shape.self) == shape)
    #expect(
      decodingFailure(Shape.self, ["kind": "p", "geometry": ["points": [[1]]], "meta": []])!
        == ("valueNotFound", ["geometry", "points", "Index 0", "Index 1"]))
  }

  @Test("superEncoder and superDecoder for class inheritance")
  func superCoders() throws {
    let value = try JSONValue(encoding: Dog(name: "Rex", legs: 4))
    #expect(value == ["name": "Rex", "super": ["legs": 4]])
    let dog = try value.decode(Dog.self)
    #expect(dog.name == "Rex" && dog.legs == 4)
    #expect(decodingFailure(Dog.self, ["name": "Rex"])! == ("valueNotFound", ["super"]))
  }

  @Test("superEncoder(forKey:), userInfo, re-requested containers")
  func superForKeyAndUserInfo() throws {
    let tagged = Tagged(inner: Item(name: "n", count: 1), flavour: "none")
    #expect(try JSONValue(encoding: tagged) == ["base": ["name": "n", "count": 1]])
    #expect(try JSONValue(encoding: tagged).decode(Tagged.self) == tagged)

    var encoder = JSONValueEncoder()
    encoder.userInfo[Tagged.flavourKey] = "sweet"
    #expect(try encoder.encode(tagged) == ["base": "sweet"])
    var decoder = JSONValueDecoder()
    decoder.userInfo[Tagged.flavourKey] = "sour"
    let back = try decoder.decode(Tagged.self, from: ["base": ["name": "n", "count": 1]])
    #expect(back.flavour == "sour")
  }

  @Test("a key encoded twice keeps its first place")
  func reEncodedKey() throws {
    struct Twice: Encodable {
      enum K: String, CodingKey { case a, b }
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: K.self)
        try c.encode(1, forKey: .a)
        try c.encode(2, forKey: .b)
        try c.encode("again", forKey: .a)
      }
    }
    #expect(try JSONValue(encoding: Twice()).serialized(.compact) == #"{"a":"again","b":2}"#)
  }

  @Test("a value that encodes nothing: an error at the top, {} inside")
  func encodesNothing() throws {
    #expect(encodingFailurePath(Nothing()) == [])
    #expect(try JSONValue(encoding: [Nothing()]) == [[:]])
    #expect(try JSONValue(encoding: ["n": Nothing()]) == ["n": [:]])
    _ = try JSONValue.object(JSONObject()).decode(Nothing.self)
  }
}
