// The module a Swift program imports: the tool vocabulary and the plugins, with the public parts of the system layer
// under them (`TerminalText`, `ToolhostVersion`, `FileSafety`'s errors), so that `import Toolhost` keeps giving what it
// gave before the core was split into layers. toolhost's own modules import the layer they use instead.
//
// ```swift
// import Toolhost
//
// let catalog = await PluginCatalog.discover(folders: ["plugins"])
// let registry = try ToolRegistry(catalog.tools)
// ```

@_exported import ToolhostPlugins
@_exported import ToolhostSystem
@_exported import ToolhostTools
