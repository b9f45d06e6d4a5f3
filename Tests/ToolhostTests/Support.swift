import Foundation
import ToolhostTestSupport

@testable import ToolhostPlugins
@testable import ToolhostSystem
@testable import ToolhostTools

extension TemporaryFolder {
  /// The plugins of this folder, discovered as the host does.
  func catalog(environment: [String: String] = ProcessInfo.processInfo.environment) async -> PluginCatalog {
    await PluginCatalog.discover(folders: [path], environment: environment)
  }
}
