// The core a Swift program builds on: the tool vocabulary and the plugins, with the public parts of the system layer
// under them (`TerminalText`, `ToolhostVersion`, `FileSafety`'s errors). An application imports `Toolhost`, which
// re-exports this and the rest; toolhost's own modules import the layer they use instead.
//
// ```swift
// import ToolhostCore
//
// let catalog = await PluginCatalog.discover(folders: ["plugins"])
// let registry = try ToolRegistry(catalog.tools)
// ```

@_exported import ToolhostPlugins
@_exported import ToolhostSystem
@_exported import ToolhostTools
