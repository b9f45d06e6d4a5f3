// swift-format-ignore-file
// "Composing dynamic sessions with instructions and profiles" and the DynamicProfile pages (FoundationModels 27
// documentation), their samples as the pages show them with `import FoundationModels` changed to
// `import Toolhost`. The types the pages assume (the photo tools, the nested instructions, the access policy, the
// server model) are plain stand-ins in AppSupport.swift.

import Toolhost

struct PresentationInstructions: DynamicInstructions {
    // The data source for conditional instructions.
    var isEditingImage = true
    var isEditingAnimation = false

    var body: some DynamicInstructions {
        // The instructions and tools that remain the same across any use of this type.
        Instructions {
            "Help people improve their presentation."
        }
        ListPhotosTool()
        AddPhotoTool()

        // Depending on the state of the app, include additional instructions
        // that provide the model with more task-specific instructions and tools.
        if isEditingImage {
            ImageEditingInstructions()
        }
        
        if isEditingAnimation {
            AnimationEditingInstructions()
        }
    }
}

func presentationSession() -> LanguageModelSession {
    let session = LanguageModelSession(
        dynamicInstructions: PresentationInstructions()
    )
    return session
}

struct CreativeProfile: LanguageModelSession.DynamicProfile {
    var pccModel = PrivateCloudComputeLanguageModel()
    var likesPoetry = true
    var likesAstronomy = false

    var body: some LanguageModelSession.DynamicProfile {
        Profile {
            // Custom instructions and tools for a creative task. 
        }
        // Use an instance of the PCC model you create in the parent profile.
        .model(pccModel)
        // Use a higher creative temperature value when a person likes poetry.
        .temperature(likesPoetry ? 0.8 : 0.1)
        // Perform deeper reasoning when a person likes astronomy.
        .reasoningLevel(likesAstronomy ? .deep : .light)
    }
}

struct PresentationProfile: LanguageModelSession.DynamicProfile {
    // Create an instance to the server model.
    var pccModel = PrivateCloudComputeLanguageModel()
    
    // The data source for the profile.
    var isEditingImage = true
    var isEditingAnimation = false

    // Determine which profile to load based on the current state.
    var body: some LanguageModelSession.DynamicProfile {
        if isEditingImage {
            Profile {
                ImageEditingInstructions()
            }
        } else if isEditingAnimation {
            Profile {
                AnimationEditingInstructions()
            }
            .model(pccModel)
            .temperature(0.2)
            .reasoningLevel(.light)
        } else {
            Profile {
                PresentationDynamicInstructions()
            }
            .temperature(0.8)
        }
    }
}

func presentationProfileSession() -> LanguageModelSession {
    let session = LanguageModelSession(
        profile: PresentationProfile()
    )
    return session
}

// A top-level dynamic profile that includes a single subprofile.
struct WritingProfile: LanguageModelSession.DynamicProfile {
    var body: some LanguageModelSession.DynamicProfile {
        // By default, the temperature value applies to both branches in 
        // `WritingContent` unless a branch adds a temperature modifier.
        WritingContent()
            .temperature(0.5)
    }
}

// A dynamic profile that contains two states.
struct WritingContent: LanguageModelSession.DynamicProfile {
    // A custom writing mode that determines which subprofile to use.
    var mode: MyCustomWritingMode = .creative

    var body: some LanguageModelSession.DynamicProfile {
        switch mode {
        case .creative:
            // Use the temperature `1.0` because the profile-level modifier takes priority.
            Profile {
                CreativeWritingInstructions()
            }
            .temperature(1.0)  
        case .technical:
            // Inherit the temperature `0.5` from `WritingProfile`.
            Profile {
                TechnicalWritingInstructions()
            }
        }
    }
}

struct FileAccessProfile: LanguageModelSession.DynamicProfile {
    var body: some LanguageModelSession.DynamicProfile {
        Profile {
            MyCustomFileAccessInstructions()
            MyCustomReadFileTool()
        }
        .onToolCall { toolCall in
            // Runs before the framework invokes the tool and allows for checking 
            // whether the app is in a state to run the tool.
            guard myAccessPolicy.permits(toolCall) else {
                throw MyAccessPolicyError.denied(toolCall.toolName)
            }
        }
        .onToolOutput { toolCall, output in
            // Runs after the tool. This is a good place to log any necessary activity.
        }
    }
}

struct CompactingProfile: LanguageModelSession.DynamicProfile {
    // Get a reference to the session history.
    @SessionProperty(\.history) 
    var history

    var body: some LanguageModelSession.DynamicProfile {
        Profile {
            Instructions("You are a helpful assistant.")
            TodoWriteTool()
        }
        .onResponse { 
            // When the entries exceed `100`, perform a stateful update to the 
            // history so it only includes the last `50` entries.
            if history.count > 100 {
                history = history.suffix(50)
            }
        }
    }
}

extension SessionPropertyValues {
    @SessionPropertyEntry 
    var activatedSkills: [String: Bool] = [:]
}

struct PlannerTool: Tool {
    let description = "Update the state of the activated skills"
    
    // Read the shared session state for the currently activated skills.
    @SessionProperty(\.activatedSkills) 
    var activatedSkills

    @Generable
    struct Arguments {
        @Guide(description: "The skills to activate")
        var skills: [String]
    }

    func call(arguments: Arguments) -> String {
        // When the model calls this tool, update the skills to an active state.
        for skill in arguments.skills {
            activatedSkills[skill] = true
        }
        return "Activated: \(arguments.skills.joined(separator: ", "))"
    }
}

struct DebugProfileModifier: LanguageModelSession.DynamicProfileModifier {
    func body(content: Content) -> some LanguageModelSession.DynamicProfile {
        content
            .temperature(0.0)
            .onResponse { response in
                print("Debug response: \(response)")
            }
    }
}

extension LanguageModelSession.DynamicProfile {
    func debug() -> some LanguageModelSession.DynamicProfile {
        self.modifier(DebugProfileModifier())
    }
}

struct DebuggedProfile: LanguageModelSession.DynamicProfile {
    var body: some LanguageModelSession.DynamicProfile {
        Profile {
            Instructions("You are a helpful assistant.")
        }
        .debug()
    }
}

struct BookIdeasProfile: LanguageModelSession.DynamicProfile {
    var body: some LanguageModelSession.DynamicProfile {
        Profile {
            Instructions("You help people generate fun and interesting book ideas.")
            MyCustomBookTool()
        }
        .historyTransform { history in
            // Perform a local transformation before prompting the model. This transform
            // doesn't affect the global state of the transcript, so you're not losing
            // existing transcript context.
            Array(history.suffix(20))
        }
    }
}

extension SessionPropertyValues {
    @SessionPropertyEntry var toolOutputCount: Int = 0
    @SessionPropertyEntry var promptCount: Int = 0
    @SessionPropertyEntry var completedTasks: Int = 0
    @SessionPropertyEntry var reasoningCount: Int = 0
    @SessionPropertyEntry var activeProfile: String = ""
}

/// The hook pages' samples, their hooks on one profile; the counts they change are session properties.
struct MyDynamicProfile: LanguageModelSession.DynamicProfile {
  @SessionProperty(\.toolCallCount) var toolCallCount
  @SessionProperty(\.toolOutputCount) var toolOutputCount
  @SessionProperty(\.promptCount) var promptCount
  @SessionProperty(\.completedTasks) var completedTasks
  @SessionProperty(\.reasoningCount) var reasoningCount
  @SessionProperty(\.activeProfile) var activeProfile

  var body: some LanguageModelSession.DynamicProfile {
    Profile {
      Instructions("You are a helpful assistant.")
      SomeTool()
    }
    .onToolCall { call in
      print("called tool: \(call)")
      toolCallCount += 1
    }
    .onToolOutput {
      toolOutputCount += 1
    }
    .onPrompt {
      promptCount += 1
    }
    .onResponse {
      completedTasks += 1
    }
    .onReasoning {
      reasoningCount += 1
    }
    .onActivate {
      activeProfile = "assistant"
    }
  }
}
