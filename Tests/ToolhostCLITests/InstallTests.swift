import Foundation
import Testing
import ToolhostCore
import ToolhostTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// `scripts/install` end to end: into a temporary prefix with a temporary HOME (and XDG folders), nothing of the
/// real user's touched. It installs the debug build `swift test` has just made (TOOLHOST_INSTALL_CONFIGURATION=debug,
/// with --ignore-lock, since `swift test` holds the build folder's lock); people get the release build.
@Suite("scripts/install", .serialized)
struct InstallTests {
  /// Runs `executable ARGUMENTS` with `environment`, in the package root.
  private func run(
    _ executable: String, _ arguments: [String], environment: [String: String], timeout: TimeInterval = 120
  ) throws -> Subprocess.Output {
    try Subprocess.run(
      executable: URL(fileURLWithPath: executable), arguments: arguments, environment: environment,
      workingDirectory: TestPackage.root, timeout: timeout)
  }

  @Test func installsRunsAndUninstallsLeavingNothingBehind() throws {
    let home = TemporaryFolder(prefix: "toolhost-install-home")
    let prefix = home.file("prefix")
    var environment = home.userEnvironment(Subprocess.cleanEnvironment(home: home.path))
    environment["TOOLHOST_INSTALL_CONFIGURATION"] = "debug"
    environment["TOOLHOST_INSTALL_IGNORE_LOCK"] = "1"
    let script = TestPackage.root.appendingPathComponent("scripts/install").path

    // The first run builds argument-parser's generate-manual tool, which takes a few minutes.
    let install = try run("/bin/sh", [script, "--prefix", prefix], environment: environment, timeout: 1800)
    try #require(install.status == 0 && !install.timedOut, "\(install.stdoutText)\(install.stderrText)")

    let installed = [
      "bin/toolhost", "share/bash-completion/completions/toolhost", "share/zsh/site-functions/_toolhost",
      "share/fish/vendor_completions.d/toolhost.fish", "share/man/man1/toolhost.1",
    ].map { prefix + "/" + $0 }
    let record = try String(contentsOfFile: prefix + "/share/toolhost/installed-files", encoding: .utf8)
    let recordedFiles = record.split(separator: "\n").map(String.init).filter { !$0.hasSuffix("/") }
    #expect(recordedFiles.sorted() == installed.sorted())
    for file in installed { #expect(FileManager.default.fileExists(atPath: file), "\(file)") }
    #expect(try run("/bin/sh", [script, "--prefix", prefix], environment: environment).status != 0)

    let toolhost = prefix + "/bin/toolhost"
    let version = try run(toolhost, ["--version"], environment: environment)
    #expect(version.status == 0)
    #expect(version.stdoutText.hasPrefix("toolhost \(ToolhostVersion.version) ("), "\(version.stdoutText)")
    #expect(version.stdoutText.contains("commit"), "\(version.stdoutText)")

    // An installed toolhost has tools once a plugin is added to the user's folder.
    try ExamplePlugins.build()
    let weather = ExamplePlugins.folder(of: "weather").path
    let add = try run(toolhost, ["plugins", "add", weather], environment: environment)
    #expect(add.status == 0, "\(add.stderrText)")
    #expect(add.stdoutText.contains("runs: "), "\(add.stdoutText)")
    #expect(FileManager.default.fileExists(atPath: home.file("config/toolhost/plugins/weather/toolhost.json")))
    let list = try run(toolhost, ["list"], environment: environment)
    #expect(list.status == 0 && list.stdoutText.contains("getWeather"), "\(list.stdoutText)\(list.stderrText)")
    let call = try run(toolhost, ["call", "getWeather", "--city", "Oslo"], environment: environment)
    #expect(call.status == 0 && call.stdoutText.contains("Oslo"), "\(call.stdoutText)\(call.stderrText)")

    let completion = prefix + "/share/bash-completion/completions/toolhost"
    let bash = try run("/bin/bash", ["-n", completion], environment: environment)
    #expect(bash.status == 0, "\(bash.stderrText)")
    if let man = TestPackage.which("man") {
      let page = try run(man, ["-P", "cat", "-l", prefix + "/share/man/man1/toolhost.1"], environment: environment)
      #expect(page.status == 0, "\(page.stderrText)")
      #expect(page.stdoutText.contains("toolhost"), "\(page.stdoutText)")
      #expect(page.stdoutText.contains("--version"), "\(page.stdoutText)")
    } else {
      Issue.record("man is not installed (apt-get install man-db, or scripts/install-deps --test)")
    }

    let uninstall = try run("/bin/sh", [script, "--uninstall", "--prefix", prefix], environment: environment)
    #expect(uninstall.status == 0, "\(uninstall.stdoutText)\(uninstall.stderrText)")
    #expect(!FileManager.default.fileExists(atPath: prefix), "left behind: \(leftovers(in: prefix))")
  }

  @Test func uninstallRemovesOnlyTheRecordedFiles() throws {
    let home = TemporaryFolder(prefix: "toolhost-install-home")
    let prefix = home.file("prefix")
    // Another program's files beside what a record names: they stay, and so do their folders.
    home.write("prefix/bin/other", "#!/bin/sh\n", executable: true)
    home.write("prefix/bin/toolhost", "#!/bin/sh\n", executable: true)
    home.write("prefix/share/man/man1/toolhost.1", ".TH toolhost 1\n")
    home.write(
      "prefix/share/toolhost/installed-files",
      "\(prefix)/bin/toolhost\n\(prefix)/share/man/man1/toolhost.1\n\(prefix)/share/man/man1/\n\(prefix)/share/man/\n"
        + "\(prefix)/share/toolhost/\n")
    let environment = home.userEnvironment(Subprocess.cleanEnvironment(home: home.path))
    let script = TestPackage.root.appendingPathComponent("scripts/install").path
    let uninstall = try run("/bin/sh", [script, "--uninstall", "--prefix", prefix], environment: environment)
    #expect(uninstall.status == 0, "\(uninstall.stdoutText)\(uninstall.stderrText)")
    #expect(leftovers(in: prefix) == ["bin", "bin/other", "share"])

    // A record naming a file outside the prefix is refused before anything is removed.
    let outside = home.write("elsewhere", "keep")
    home.write("prefix/share/toolhost/installed-files", "\(prefix)/bin/other\n\(outside)\n")
    let refused = try run("/bin/sh", [script, "--uninstall", "--prefix", prefix], environment: environment)
    #expect(refused.status != 0)
    #expect(refused.stderrText.contains("outside"), "\(refused.stderrText)")
    #expect(FileManager.default.fileExists(atPath: outside))
  }

  /// The environment the script runs with in these tests, and its path.
  private func setUp(_ home: TemporaryFolder) -> (environment: [String: String], script: String) {
    var environment = home.userEnvironment(Subprocess.cleanEnvironment(home: home.path))
    environment["TOOLHOST_INSTALL_CONFIGURATION"] = "debug"
    environment["TOOLHOST_INSTALL_IGNORE_LOCK"] = "1"
    return (environment, TestPackage.root.appendingPathComponent("scripts/install").path)
  }

  /// A prefix, or a folder under it the script writes into, that another user could change is refused before
  /// anything is built or written, naming the folder, its mode or owner, and the fix. A sticky folder above is fine.
  @Test func refusesAPrefixOthersCouldChange() throws {
    let home = TemporaryFolder(prefix: "toolhost-install-home")
    let (environment, script) = setUp(home)
    let prefix = try home.folder("prefix")
    try home.folder("prefix/bin")
    try home.folder("prefix/share/man")

    func expectRefused(_ prefix: String, naming path: String, _ parts: String...) throws {
      let run = try run("/bin/sh", [script, "--prefix", prefix], environment: environment, timeout: 300)
      #expect(run.status == 1 && !run.timedOut, "\(run.stdoutText)\(run.stderrText)")
      let message = run.stderrText
      #expect(message.contains("install: refusing to install into \(prefix): \(path) "), "\(message)")
      for part in parts { #expect(message.contains(part), "\(message)") }
      #expect(!run.stdoutText.contains("building toolhost"), "\(run.stdoutText)")
      #expect(!FileManager.default.fileExists(atPath: home.file("prefix/bin/toolhost")))
      #expect(!FileManager.default.fileExists(atPath: home.file("prefix/share/toolhost")))
    }

    #expect(chmod(prefix, 0o777) == 0)
    try expectRefused(
      prefix, naming: prefix, "is writable by every user (mode 777)", "(fix: chmod go-w '\(prefix)'")
    #expect(chmod(prefix, 0o755) == 0)

    #expect(chmod(home.file("prefix/bin"), 0o775) == 0)
    try expectRefused(
      prefix, naming: home.file("prefix/bin"), "is writable by its group (mode 775)",
      "(fix: chmod go-w '\(home.file("prefix/bin"))'")
    #expect(chmod(home.file("prefix/bin"), 0o755) == 0)

    // A folder under the prefix that does not exist yet: the closest one above it that does decides.
    #expect(chmod(home.file("prefix/share/man"), 0o757) == 0)
    try expectRefused(prefix, naming: home.file("prefix/share/man"), "is writable by every user (mode 757)")
    #expect(chmod(home.file("prefix/share/man"), 0o755) == 0)

    // A sticky folder is fine above the prefix, not as the prefix: checked again once the build is done, when every
    // folder is made (another account could have made one under a sticky folder while the build ran).
    #expect(chmod(prefix, 0o1777) == 0)
    let sticky = try run("/bin/sh", [script, "--prefix", prefix], environment: environment, timeout: 600)
    #expect(sticky.status == 1 && !sticky.timedOut, "\(sticky.stdoutText)\(sticky.stderrText)")
    #expect(
      sticky.stderrText.contains("refusing to install into \(prefix): \(prefix) is writable by others (mode 1777)"),
      "\(sticky.stderrText)")
    #expect(!FileManager.default.fileExists(atPath: home.file("prefix/bin/toolhost")))
    #expect(chmod(prefix, 0o755) == 0)

    // A folder above the prefix, owned by another user (only root can give a folder away).
    if geteuid() == 0 {
      #expect(chown(home.path, 65534, 65534) == 0, "chown failed: errno \(errno)")
      defer { _ = chown(home.path, 0, 0) }
      try expectRefused(prefix, naming: home.path, "belongs to user", "(uid 65534)", "(fix: chown ")
    }
  }

  /// The files are written to fresh temporary files and renamed into place: a hard link, or a symbolic link, at an
  /// installed file's name or at a name the script once wrote through (the record's `.partial`) is replaced, and
  /// what it pointed to is left as it was.
  @Test func installReplacesFilesAndNeverWritesThroughThem() throws {
    let home = TemporaryFolder(prefix: "toolhost-install-home")
    let (environment, script) = setUp(home)
    let prefix = try home.folder("prefix")
    try home.folder("prefix/bin")
    try home.folder("prefix/share/toolhost")
    try home.folder("prefix/share/man/man1")
    let binaryVictim = home.write("victim-binary", "another program\n")
    let recordVictim = home.write("victim-record", "another record\n")
    let manualVictim = home.write("victim-manual", "another manual\n")
    #expect(link(binaryVictim, home.file("prefix/bin/toolhost")) == 0)
    #expect(symlink(recordVictim, home.file("prefix/share/toolhost/installed-files.partial")) == 0)
    #expect(symlink(manualVictim, home.file("prefix/share/man/man1/toolhost.1")) == 0)

    let install = try run("/bin/sh", [script, "--prefix", prefix], environment: environment, timeout: 1800)
    try #require(install.status == 0 && !install.timedOut, "\(install.stdoutText)\(install.stderrText)")
    #expect(try String(contentsOfFile: binaryVictim, encoding: .utf8) == "another program\n")
    #expect(try String(contentsOfFile: recordVictim, encoding: .utf8) == "another record\n")
    #expect(try String(contentsOfFile: manualVictim, encoding: .utf8) == "another manual\n")
    #expect(TemporaryFolder.permissions(home.file("prefix/bin/toolhost")) == 0o755)
    #expect(
      (try? FileManager.default.destinationOfSymbolicLink(atPath: home.file("prefix/share/man/man1/toolhost.1")))
        == nil)
    let record = try String(contentsOfFile: home.file("prefix/share/toolhost/installed-files"), encoding: .utf8)
    #expect(record.contains("\(prefix)/bin/toolhost\n"), "\(record)")
    #expect(!leftovers(in: prefix).contains { $0.contains(".toolhost-install.") }, "\(leftovers(in: prefix))")

    let uninstall = try run("/bin/sh", [script, "--uninstall", "--prefix", prefix], environment: environment)
    #expect(uninstall.status == 0, "\(uninstall.stdoutText)\(uninstall.stderrText)")
    #expect(!FileManager.default.fileExists(atPath: home.file("prefix/bin/toolhost")))
    #expect(try String(contentsOfFile: binaryVictim, encoding: .utf8) == "another program\n")
  }

  /// Uninstalling removes a recorded path only where it really is under the prefix: a folder under the prefix that
  /// is a symbolic link to elsewhere is not followed, and nothing is removed.
  @Test func uninstallFollowsNoLinkOutOfThePrefix() throws {
    let home = TemporaryFolder(prefix: "toolhost-install-home")
    let (environment, script) = setUp(home)
    let prefix = try home.folder("prefix")
    let outside = try home.folder("outside")
    let victim = home.write("outside/victim", "keep\n")
    home.write("prefix/bin/toolhost", "#!/bin/sh\n", executable: true)
    #expect(symlink(outside, home.file("prefix/share-link")) == 0)
    home.write(
      "prefix/share/toolhost/installed-files",
      "\(prefix)/bin/toolhost\n\(prefix)/share-link/victim\n\(prefix)/share-link/\n")
    let refused = try run("/bin/sh", [script, "--uninstall", "--prefix", prefix], environment: environment)
    #expect(refused.status != 0)
    #expect(
      refused.stderrText.contains(
        "names \(prefix)/share-link/victim, which is really \(outside)/victim (symbolic links resolved), outside "),
      "\(refused.stderrText)")
    #expect(FileManager.default.fileExists(atPath: victim))
    #expect(FileManager.default.fileExists(atPath: home.file("prefix/bin/toolhost")))
    #expect(FileManager.default.fileExists(atPath: outside))
  }

  /// The paths under `folder`, relative and sorted (empty when it does not exist).
  private func leftovers(in folder: String) -> [String] {
    ((try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? []).sorted()
  }
}
