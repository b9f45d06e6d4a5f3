import Foundation
import ToolhostTestSupport

@testable import Toolhost

extension TemporaryFolder {
  /// The plugins of this folder, discovered as the host does.
  func catalog(environment: [String: String] = ProcessInfo.processInfo.environment) async -> PluginCatalog {
    await PluginCatalog.discover(folders: [path], environment: environment)
  }
}
