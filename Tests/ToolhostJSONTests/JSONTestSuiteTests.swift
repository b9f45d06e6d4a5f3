import Foundation
import Testing
import ToolhostJSON
import ToolhostTestSupport

/// The `test_parsing` folder of JSONTestSuite in the shared test data: `$TOOLHOST_SHARED_DIR/testdata/...` when that
/// variable is set, else `../shared/testdata/...` beside the package root; `nil` when it does not exist.
let jsonTestSuiteDirectory: URL? = {
  let url = TestPackage.sharedTestData("JSONTestSuite/test_parsing")
  var isDirectory: ObjCBool = false
  return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    ? url : nil
}()

/// The files of the suite whose names start with `prefix`, sorted, with their bytes.
func suiteFiles(_ prefix: String) throws -> [(name: String, bytes: [UInt8])] {
  guard let dir = jsonTestSuiteDirectory else { return [] }
  let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
    .filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }.sorted()
  return try names.map { ($0, [UInt8](try Data(contentsOf: dir.appendingPathComponent($0)))) }
}

@Suite(
  "JSONTestSuite conformance",
  .enabled(
    if: jsonTestSuiteDirectory != nil,
    "JSONTestSuite not found: set TOOLHOST_SHARED_DIR to the shared folder, or put it at ../shared/testdata/JSONTestSuite"
  ))
struct JSONTestSuiteTests {
  @Test("every y_ file parses")
  func mustAccept() throws {
    let files = try suiteFiles("y_")
    #expect(files.count > 90)
    var failed: [String] = []
    for file in files {
      do { _ = try JSONValue.parse(file.bytes) } catch {
        failed.append("\(file.name): \(error)")
      }
    }
    print("JSONTestSuite y_: \(files.count - failed.count) of \(files.count) accepted")
    #expect(failed.isEmpty, "rejected: \(failed.joined(separator: "\n"))")
  }

  @Test("every n_ file is rejected with a JSONError")
  func mustReject() throws {
    let files = try suiteFiles("n_")
    #expect(files.count > 180)
    var accepted: [String] = []
    for file in files {
      do {
        let value = try JSONValue.parse(file.bytes)
        accepted.append("\(file.name) -> \(value)")
      } catch {
        // A typed throw: the error is always a JSONError.
        #expect(error.kind == .syntax || error.kind == .tooDeep)
      }
    }
    print("JSONTestSuite n_: \(files.count - accepted.count) of \(files.count) rejected")
    #expect(accepted.isEmpty, "accepted: \(accepted.joined(separator: "\n"))")
  }

  @Test("i_ files do not crash")
  func implementationDefined() throws {
    let files = try suiteFiles("i_")
    #expect(!files.isEmpty)
    var accepted: [String] = []
    var rejected: [String] = []
    for file in files {
      do {
        _ = try JSONValue.parse(file.bytes)
        accepted.append(file.name)
      } catch {
        rejected.append("\(file.name) (\(error.message))")
      }
    }
    print(
      "JSONTestSuite i_: \(accepted.count) accepted, \(rejected.count) rejected of \(files.count)")
    print("  i_ accepted: \(accepted.joined(separator: ", "))")
    print("  i_ rejected: \(rejected.joined(separator: ", "))")
  }

  @Test("mutated suite files never crash, and whatever parses prints and reads back the same")
  func mutations() throws {
    var state: UInt64 = 0x5EED
    func next(_ n: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(n))
    }
    let inserts: [[UInt8]] = [
      Array(#"\u0000"#.utf8), Array(#"{"\u0000":"#.utf8), Array(#""a\u0000b":1,"#.utf8),
      [0xEF, 0xB7, 0x90],  // U+FDD0, the first NUL substitute
      [0x22], [0x5C], [0x7B], [0x7D], [0x5B], [0x5D], [0x2C], [0x3A], [0x30], [0x2D], [0x65],
      [0xFF],
    ]
    var accepted = 0
    var total = 0
    for file in try suiteFiles("y_") + suiteFiles("n_") {
      for _ in 0..<40 {
        var bytes = file.bytes
        switch next(3) {
        case 0 where !bytes.isEmpty:
          bytes[next(bytes.count)] = UInt8(next(256))
        case 1:
          bytes.insert(contentsOf: inserts[next(inserts.count)], at: next(bytes.count + 1))
        default:
          bytes = Array(bytes.prefix(next(bytes.count + 1)))
        }
        total += 1
        guard let value = try? JSONValue.parse(bytes) else { continue }
        accepted += 1
        let text = try value.serialized(.compact)
        #expect(try JSONValue.parse(text) == value, "\(file.name) mutated: \(bytes)")
      }
    }
    print("JSONTestSuite mutations: \(accepted) of \(total) accepted")
  }

  @Test("accepted y_ files print and read back as the same value")
  func roundTrip() throws {
    for file in try suiteFiles("y_") {
      let value = try JSONValue.parse(file.bytes)
      let text = try value.serialized(.compact)
      #expect(try JSONValue.parse(text) == value, "\(file.name): \(text)")
      let ascii = try value.serialized(JSONStyle(pretty: true, asciiOnly: true))
      #expect(ascii.utf8.allSatisfy { $0 < 0x80 }, "\(file.name)")
      #expect(try JSONValue.parse(ascii) == value, "\(file.name): \(ascii)")
    }
  }
}
