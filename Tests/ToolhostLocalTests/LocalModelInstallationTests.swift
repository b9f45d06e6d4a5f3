import Foundation
import Testing
import ToolhostLocal
import ToolhostSession
import ToolhostTestSupport

/// Where toolhost finds the local model, with fake installations in temporary folders (no real model): the
/// `ready` file and an executable `venv/bin/python` are all `locate` looks for.
@Suite struct LocalModelInstallationTests {
  /// Makes a fake finished installation in `directory`.
  @discardableResult
  private func fakeInstallation(_ folder: TemporaryFolder, _ relative: String) -> String {
    folder.write(relative + "/ready", "llama-cpp-python 0.3.36\n")
    folder.write(relative + "/venv/bin/python", "#!/bin/sh\nexit 0\n", executable: true)
    return folder.file(relative)
  }

  @Test func theLookupOrder() throws {
    let folder = TemporaryFolder(prefix: "toolhost-local-lookup")
    let explicit = fakeInstallation(folder, "explicit")
    let checkout = folder.file("checkout")
    let checkoutInstallation = fakeInstallation(folder, "checkout/.toolhost/local-model")
    try FileManager.default.createDirectory(
      atPath: checkout + "/.build/debug", withIntermediateDirectories: true)
    let user = fakeInstallation(folder, "data/toolhost/local-model")
    let environment = ["HOME": folder.file("home"), "XDG_DATA_HOME": folder.file("data")]
    let beside = [checkout + "/.build/debug"]

    // TOOLHOST_LOCAL_DIR wins over everything.
    var withExplicit = environment
    withExplicit["TOOLHOST_LOCAL_DIR"] = explicit
    #expect(try LocalModelInstallation.locate(environment: withExplicit, searchingFrom: beside).directory == explicit)
    // Then the checkout's folder above the executable (development).
    #expect(
      try LocalModelInstallation.locate(environment: environment, searchingFrom: beside).directory
        == checkoutInstallation)
    // Then the per-user folder, for an executable installed anywhere else.
    let installed = folder.file("prefix/bin")
    try FileManager.default.createDirectory(atPath: installed, withIntermediateDirectories: true)
    #expect(try LocalModelInstallation.locate(environment: environment, searchingFrom: [installed]).directory == user)
    #expect(LocalModelInstallation.userDirectory(environment: environment) == user)
    #expect(LocalModelInstallation.installDirectory(environment: environment) == user)
    #expect(LocalModelInstallation.installDirectory(environment: withExplicit) == explicit)
  }

  @Test func theUserFolderDefaultsToTheHomeAndIgnoresARelativeXDGDataHome() throws {
    let folder = TemporaryFolder(prefix: "toolhost-local-lookup")
    let user = fakeInstallation(folder, "home/.local/share/toolhost/local-model")
    let environment = ["HOME": folder.file("home"), "XDG_DATA_HOME": "relative/data"]
    #expect(LocalModelInstallation.userDirectory(environment: environment) == user)
    #expect(try LocalModelInstallation.locate(environment: environment, searchingFrom: [folder.path]).directory == user)
  }

  @Test func aUserFolderOthersCouldChangeIsRefused() throws {
    let folder = TemporaryFolder(prefix: "toolhost-local-lookup")
    let user = fakeInstallation(folder, "data/toolhost/local-model")
    try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: user)
    #expect {
      try LocalModelInstallation.locate(
        environment: ["HOME": folder.file("home"), "XDG_DATA_HOME": folder.file("data")],
        searchingFrom: [folder.path])
    } throws: { error in
      (error as? LanguageModelError)?.message.contains("is writable by every user") == true
    }
  }

  /// `$TOOLHOST_LOCAL_DIR` gets the ownership check the other places get: a set-up its group could change, or
  /// whose Python another user owns, is refused with the path, what is wrong and the fix.
  @Test func anExplicitFolderOthersCouldChangeIsRefused() throws {
    let folder = TemporaryFolder(prefix: "toolhost-local-lookup")
    let explicit = fakeInstallation(folder, "explicit")
    let environment = ["HOME": folder.file("home"), "TOOLHOST_LOCAL_DIR": explicit]
    #expect(try LocalModelInstallation.locate(environment: environment, searchingFrom: []).directory == explicit)

    #expect(chmod(explicit, 0o775) == 0)
    #expect {
      try LocalModelInstallation.locate(environment: environment, searchingFrom: [])
    } throws: { error in
      let message = (error as? LanguageModelError)?.message ?? ""
      return message.contains("TOOLHOST_LOCAL_DIR") && message.contains("\(explicit) is writable by its group")
        && message.contains("mode 775") && message.contains("fix: chmod go-w")
    }
    #expect(chmod(explicit, 0o755) == 0)

    // Another user's Python in it (the tests run as root, which may give a file away; others skip this part).
    guard geteuid() == 0 else { return }
    let python = explicit + "/venv/bin/python"
    #expect(chown(python, 65534, 65534) == 0, "chown failed: errno \(errno)")
    #expect {
      try LocalModelInstallation.locate(environment: environment, searchingFrom: [])
    } throws: { error in
      let message = (error as? LanguageModelError)?.message ?? ""
      return message.contains("\(python) belongs to user") && message.contains("fix: chown")
    }
  }

  @Test func theEmbeddedInstallerIsTheScript() throws {
    let script = try String(
      contentsOfFile: TestPackage.root.appendingPathComponent("scripts/install-local-model").path, encoding: .utf8)
    let requirements = try String(
      contentsOfFile: TestPackage.root.appendingPathComponent("scripts/local-model-requirements.txt").path,
      encoding: .utf8)
    #expect(EmbeddedInstaller.script + "\n" == script, "run scripts/embed-local-model-installer")
    #expect(EmbeddedInstaller.requirements + "\n" == requirements, "run scripts/embed-local-model-installer")
  }

  /// `model install` runs the embedded installer into the per-user folder; on an installation already in place
  /// (a sparse model file of the right size, a stand-in Python that imports anything) it says so and stops, so
  /// nothing is downloaded or built.
  @Test func modelInstallFindsAnInstallationInPlace() throws {
    let folder = TemporaryFolder(prefix: "toolhost-local-install")
    let user = fakeInstallation(folder, "data/toolhost/local-model")
    try FileManager.default.createDirectory(atPath: user + "/models", withIntermediateDirectories: true)
    let model = user + "/models/" + LocalModelInstallation.defaultModelFile
    FileManager.default.createFile(atPath: model, contents: Data("GGUF".utf8))
    let handle = try #require(FileHandle(forWritingAtPath: model))
    try handle.truncate(atOffset: 491_400_064)
    try handle.close()
    let environment = Subprocess.cleanEnvironment(home: folder.file("home")).merging(
      ["XDG_DATA_HOME": folder.file("data")], uniquingKeysWith: { $1 })
    let binary = try TestPackage.requireToolhostBinary()
    let install = try Subprocess.run(
      executable: URL(fileURLWithPath: binary), arguments: ["model", "install"], environment: environment,
      timeout: 60)
    #expect(install.status == 0, "\(install.stdoutText)\(install.stderrText)")
    #expect(install.stdoutText.contains("local model already set up in \(user)"), "\(install.stdoutText)")

    // `model status` says where it is and how big (TOOLHOST_LOCAL_DIR: the binary under test is in a checkout).
    var statusEnvironment = environment
    statusEnvironment["TOOLHOST_LOCAL_DIR"] = user
    let status = try Subprocess.run(
      executable: URL(fileURLWithPath: binary), arguments: ["model", "status"], environment: statusEnvironment,
      timeout: 60)
    #expect(status.stdoutText.contains("local model: \(user) (ready)"), "\(status.stdoutText)\(status.stderrText)")
    #expect(status.stdoutText.contains("\(LocalModelInstallation.defaultModelFile): 491 MB"), "\(status.stdoutText)")
  }

  @Test func modelInstallRefusesAFolderOthersCouldChange() throws {
    let folder = TemporaryFolder(prefix: "toolhost-local-install")
    folder.write("data/keep", "")
    try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.file("data"))
    let environment = ["HOME": folder.file("home"), "XDG_DATA_HOME": folder.file("data")]
    #expect {
      try LocalModelInstaller.install(withLarger: false, environment: environment)
    } throws: { error in
      "\(error)".contains("is writable by every user")
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("data/toolhost")))
  }
}
