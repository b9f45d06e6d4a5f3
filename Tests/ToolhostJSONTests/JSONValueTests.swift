import Testing
import ToolhostJSON

/// Parses `text`, failing the test on an error.
func parsed(_ text: String) throws -> JSONValue { try JSONValue.parse(text) }

/// The error `JSONValue.parse` throws for `text`, or `nil` when it parses.
func parseError(_ text: String) -> JSONError? {
  do {
    _ = try JSONValue.parse(text)
    return nil
  } catch {
    return error
  }
}

/// `depth` arrays nested in one another, built in Swift.
func nestedArrays(_ depth: Int) -> JSONValue {
  var value: JSONValue = .array([])
  for _ in 1..<depth { value = .array([value]) }
  return value
}

@Suite("Numbers")
struct NumberTests {
  @Test("integers and reals stay distinct and print as written")
  func integersVersusReals() throws {
    #expect(try parsed("3") == .integer(3))
    #expect(try parsed("3.0") == .real(3))
    #expect(try parsed("-0") == .integer(0))
    #expect(try parsed("1e2") == .real(100))
    #expect(try parsed("1E2") == .real(100))
    #expect(try parsed("[3, 3.0, -0, 1e2, 2.5]").serialized(.compact) == "[3,3.0,0,100.0,2.5]")
    #expect(try JSONValue.real(3).serialized(.compact) == "3.0")
    #expect(try JSONValue.integer(3).serialized(.compact) == "3")
    #expect(JSONValue.integer(3) != JSONValue.real(3))
    #expect(JSONValue.integer(3).jsonEquals(.real(3)))
  }

  @Test("Int64.min and Int64.max round-trip")
  func int64Limits() throws {
    for n in [Int64.min, Int64.max, 0, -1, 1] {
      let text = try JSONValue.integer(n).serialized(.compact)
      #expect(text == String(n))
      #expect(try parsed(text) == .integer(n))
    }
  }

  @Test("an integer beyond 64 bits is a syntax error, not a rounded real")
  func integerOverflow() throws {
    for text in ["9223372036854775808", "-9223372036854775809", "123456789012345678901234567890"] {
      let error = parseError(text)
      #expect(error?.kind == .syntax, "\(text)")
      #expect(error?.message.contains("too big") == true, "\(String(describing: error))")
    }
    // Written as a real, the same magnitude is fine.
    #expect(try parsed("9223372036854775808.0") == .real(9_223_372_036_854_775_808.0))
  }

  @Test(
    "reals print as the shortest text that reads back the same",
    arguments: [
      (0.1, "0.1"), (1e-5, "1e-5"), (1e300, "1e300"), (5e-324, "5e-324"), (-0.0, "-0.0"),
      (100.0, "100.0"),
      (0.1 + 0.2, "0.30000000000000004"), (1e16, "1e16"), (1.5e-7, "1.5e-7"), (-2.5e+22, "-2.5e22"),
      (Double.greatestFiniteMagnitude, "1.7976931348623157e308"), (123_456.789, "123456.789"),
      (1e-300, "1e-300"),
    ])
  func shortestReals(value: Double, text: String) throws {
    let printed = try JSONValue.real(value).serialized(.compact)
    #expect(printed == text)
    let back = try parsed(printed)
    #expect(back.doubleValue?.bitPattern == value.bitPattern)
    if case .real = back {} else { Issue.record("\(printed) did not read back as a real") }
  }

  @Test("reals inside strings and keys are left alone")
  func realsInStrings() throws {
    let value: JSONValue = ["1.50": ["1.50", 1.5, "x\\", 0.25, "\"2.0e+05\"", 2e5]]
    #expect(
      try value.serialized(.compact) == #"{"1.50":["1.50",1.5,"x\\",0.25,"\"2.0e+05\"",200000.0]}"#)
    #expect(try value.serialized(.pretty).contains(#""1.50","#))
  }

  @Test("non-finite reals print as null")
  func nonFinite() throws {
    #expect(try JSONValue.real(.nan).serialized(.compact) == "null")
    #expect(try JSONValue.real(.infinity).serialized(.compact) == "null")
    #expect(try JSONValue.array([.real(-.infinity), 1.5]).serialized(.compact) == "[null,1.5]")
    #expect(parseError("NaN") != nil)
    #expect(parseError("[Infinity]") != nil)
    #expect(parseError("1e999")?.kind == .syntax)
  }
}

@Suite("Strings")
struct StringTests {
  @Test("NUL characters survive both ways")
  func nul() throws {
    let value = JSONValue.string("a\u{0}b")
    #expect(try value.serialized(.compact) == #""a\u0000b""#)
    #expect(try parsed(#""a\u0000b""#) == value)
  }

  @Test("a NUL escape in an object key is accepted")
  func nulInKey() throws {
    let value = try parsed(#"{"foo\u0000bar": 42, "x": "\u0000"}"#)
    #expect(value.objectValue?.keys == ["foo\u{0}bar", "x"])
    #expect(value["x"] == .string("\u{0}"))
    #expect(try value.serialized(.compact) == #"{"foo\u0000bar":42,"x":"\u0000"}"#)
    #expect(try parsed(value.serialized(.compact)) == value)
  }

  @Test("the NUL substitute never clashes with characters in the text")
  func nulSubstituteClash() throws {
    // U+FDD0 is the first substitute tried; here it is in the text raw, and U+FDD1 escaped, so another is used.
    let fdd0 = String(Unicode.Scalar(0xFDD0)!)
    let fdd1 = String(Unicode.Scalar(0xFDD1)!)
    let value = try parsed("{\"\(fdd0)\\u0000\": \"\\ufdd1\", \"\\u0000\": \"\\\\u0000\"}")
    #expect(value.objectValue?.keys == [fdd0 + "\u{0}", "\u{0}"])
    #expect(value[fdd0 + "\u{0}"] == .string(fdd1))
    #expect(value["\u{0}"] == .string("\\u0000"))

    // Every noncharacter U+FDD0...U+FDEF in the text: a private-use character stands in instead.
    let all = (0xFDD0...0xFDEF).map { String(Unicode.Scalar($0)!) }.joined()
    let crowded = try parsed("{\"\(all)\\u0000\": \"\\uE000\\u0000\"}")
    #expect(crowded.objectValue?.keys == [all + "\u{0}"])
    #expect(crowded[all + "\u{0}"] == .string("\u{E000}\u{0}"))
  }

  @Test("errors after a NUL escape in a key keep their place and text")
  func nulInKeyThenError() {
    let error = parseError("{\"a\\u0000\": 1,\n \"b\\u0000\": }")
    #expect(error?.kind == .syntax)
    #expect(error?.line == 2)
    #expect(error?.message.contains("FDD") == false, "\(String(describing: error))")
  }

  @Test("emoji and other non-ASCII text")
  func unicode() throws {
    let value = JSONValue.string("héllo 😀 日本")
    #expect(try value.serialized(.compact) == "\"héllo 😀 日本\"")
    #expect(
      try value.serialized(JSONStyle(asciiOnly: true)).lowercased()
        == #""h\u00e9llo \ud83d\ude00 \u65e5\u672c""#)
    #expect(try parsed(#""\ud83d\ude00""#) == .string("😀"))
    #expect(try parsed(value.serialized(JSONStyle(asciiOnly: true))) == value)
  }

  @Test("escapes")
  func escapes() throws {
    let value = JSONValue.string("\"\\/\n\r\t\u{8}\u{c}\u{1f}")
    let text = try value.serialized(.compact)
    #expect(text == #""\"\\/\n\r\t\b\f\u001F""#)  // jansson writes uppercase hex
    #expect(try parsed(text) == value)
    #expect(try parsed(#""\/\u0041""#) == .string("/A"))
  }

  @Test("invalid strings are rejected")
  func invalid() {
    #expect(parseError("\"a\nb\"")?.kind == .syntax)  // raw control character
    #expect(parseError(#""\x41""#)?.kind == .syntax)
    #expect(parseError(#""\ud800""#)?.kind == .syntax)  // lone surrogate
    #expect((try? JSONValue.parse([0x22, 0xFF, 0x22])) == nil)  // invalid UTF-8
    #expect((try? JSONValue.parse([0x22, 0x61, 0x00, 0x22])) == nil)  // raw NUL
  }
}

@Suite("Objects and arrays")
struct StructureTests {
  @Test("keys keep their order")
  func keyOrder() throws {
    let text = #"{"zebra":1,"apple":2,"mango":{"z":true,"a":null}}"#
    let value = try parsed(text)
    #expect(value.objectValue?.keys == ["zebra", "apple", "mango"])
    #expect(value["mango"]?.objectValue?.keys == ["z", "a"])
    #expect(try value.serialized(.compact) == text)
    let built: JSONValue = ["b": 1, "a": 2]
    #expect(try built.serialized(.compact) == #"{"b":1,"a":2}"#)
  }

  @Test("a duplicate key keeps its first place and its last value")
  func duplicateKeys() throws {
    let value = try parsed(#"{"a":1,"b":2,"a":3}"#)
    #expect(value.objectValue?.keys == ["a", "b"])
    #expect(value["a"] == .integer(3))
    #expect(try value.serialized(.compact) == #"{"a":3,"b":2}"#)
  }

  @Test("scalars at the top level; empty containers")
  func topLevel() throws {
    #expect(try parsed(" 42 ") == .integer(42))
    #expect(try parsed("\"s\"") == .string("s"))
    #expect(try parsed("null") == .null)
    #expect(try parsed("true") == .bool(true))
    #expect(try parsed("[]") == .array([]))
    #expect(try parsed("{}") == .object(JSONObject()))
    #expect(try JSONValue.object(JSONObject()).serialized(.pretty) == "{}")
  }

  @Test("String, byte-array and buffer parsing agree")
  func inputForms() throws {
    let text = #"{"k":[1,2.5,"é"]}"#
    let bytes = Array(text.utf8)
    let fromBuffer = try bytes.withUnsafeBytes { buffer in
      Result { () throws(JSONError) in try JSONValue.parse(buffer) }
    }.get()
    #expect(try parsed(text) == JSONValue.parse(bytes))
    #expect(try fromBuffer == JSONValue.parse(bytes))
    #expect(parseError("")?.kind == .syntax)
    #expect(parseError("  \n ")?.kind == .syntax)
    #expect((try? JSONValue.parse([UInt8]())) == nil)
  }
}

@Suite("Errors and limits")
struct ErrorTests {
  @Test("parse errors carry line and column")
  func errorPlace() throws {
    let error = try #require(parseError("{\"a\":1,\n \"b\": }"))
    #expect(error.kind == .syntax)
    #expect(error.line == 2)
    #expect(error.column == 7)
    #expect(error.position != nil)
    #expect(error.description.hasPrefix("line 2, column 7: "))

    #expect(parseError("[1,2,]")?.kind == .syntax)
    #expect(parseError("{\"a\":1,}")?.kind == .syntax)
    #expect(parseError("[1] x")?.kind == .syntax)
    #expect(parseError("// c\n1")?.kind == .syntax)
    #expect(parseError("'a'")?.kind == .syntax)
  }

  @Test("a raw NUL byte is reported where it is")
  func nulPlace() throws {
    let error = try #require(parseError("[1,\n 2\u{0}]"))
    #expect(error.line == 2)
    #expect(error.column == 3)
    #expect(error.position == 6)
  }

  @Test("100,000 nested arrays or objects are too deep, not a crash")
  func deepParse() {
    let arrays = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    #expect(parseError(arrays)?.kind == .tooDeep)
    let objects =
      String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000)
    #expect(parseError(objects)?.kind == .tooDeep)
    let unclosed = String(repeating: "[", count: 100_000)
    #expect(parseError(unclosed)?.kind == .tooDeep)
  }

  @Test("the nesting limit is the same for parsing and printing")
  func depthBoundary() throws {
    let limit = JSONValue.maximumDepth
    let atLimit = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
    let value = try parsed(atLimit)
    #expect(value == nestedArrays(limit))
    #expect(try value.serialized(.compact) == atLimit)
    let over = "[" + atLimit + "]"
    #expect(parseError(over)?.kind == .tooDeep)
    #expect(throws: JSONError.self) { try nestedArrays(limit + 1).serialized(.compact) }
  }

  @Test("serializing a 3,000-deep value built in Swift throws tooDeep")
  func deepSerialize() throws {
    let deep = nestedArrays(3000)
    do {
      _ = try deep.serialized(.compact)
      Issue.record("serialized a 3,000-deep value")
    } catch {
      #expect(error.kind == .tooDeep)
    }
    var object: JSONValue = 1
    for _ in 0..<3000 { object = ["k": object] }
    #expect(throws: JSONError(kind: .tooDeep, message: "nesting is deeper than 2048 levels")) {
      try object.serialized(.pretty)
    }
    #expect(deep.serialized().hasPrefix("null"))  // The non-throwing form never crashes either.
  }
}

@Suite("Styles")
struct StyleTests {
  let value: JSONValue = ["b": [1, 2.5], "a": ["y": "é", "x": [:]], "c": []]

  @Test("compact")
  func compact() throws {
    #expect(try value.serialized(.compact) == #"{"b":[1,2.5],"a":{"y":"é","x":{}},"c":[]}"#)
    #expect(value.description == (try value.serialized(.compact)))
  }

  @Test("pretty")
  func pretty() throws {
    let expected = """
      {
        "b": [
          1,
          2.5
        ],
        "a": {
          "y": "é",
          "x": {}
        },
        "c": []
      }
      """
    #expect(try value.serialized(.pretty) == expected)
  }

  @Test("sorted keys, at every level")
  func sorted() throws {
    #expect(
      try value.serialized(JSONStyle(sortedKeys: true))
        == #"{"a":{"x":{},"y":"é"},"b":[1,2.5],"c":[]}"#)
  }

  @Test("ASCII only")
  func ascii() throws {
    let text = try value.serialized(JSONStyle(sortedKeys: true, asciiOnly: true))
    #expect(text.lowercased() == #"{"a":{"x":{},"y":"\u00e9"},"b":[1,2.5],"c":[]}"#)
    #expect(try parsed(text) != value)  // Sorted: a different key order...
    #expect(try parsed(text).jsonEquals(value))  // ...but the same JSON.
  }

  @Test("keys are told apart by code points, not by Swift's canonical equivalence")
  func exactKeys() throws {
    let text = "{\"\u{E9}\": 1, \"e\u{301}\": 2}"  // é written two ways: two members of the object
    let object = try #require(try JSONValue.parse(text).objectValue)
    #expect(object.count == 2)
    #expect(object["\u{E9}"] == 1)
    #expect(object["e\u{301}"] == 2)
    var copy = object
    copy["e\u{301}"] = nil
    #expect(copy.keys == ["\u{E9}"])
    #expect(copy != object)
    let one: JSONObject = ["\u{E9}": 1]
    let other: JSONObject = ["e\u{301}": 1]
    #expect(one != other)
  }
}
