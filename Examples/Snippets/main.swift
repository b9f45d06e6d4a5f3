// Every Swift snippet of README.md and docs/*.md is a file of this folder, compiled with the package so that none can
// rot; DocSnippetTests checks that each page shows its snippet as it is here. Nothing runs: this only names them.

_ = greetAndForecast
_ = callTools
_ = planATrip
_ = askAnHTTPModel(catalog:)
_ = serveTheChatPage(model:registry:catalog:)
_ = askTheLocalModel(catalog:)
_ = chatLikeTheTerminal
