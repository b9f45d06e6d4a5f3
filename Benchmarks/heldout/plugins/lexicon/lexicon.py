#!/usr/bin/env python3
"""Held-out eval plugin: defineWord and findSynonyms -- a small English dictionary and thesaurus.

Reads one toolhost request on stdin, writes one reply object on stdout. The entries are the table below.
Standard library only.
"""

import difflib
import json
import sys

# word -> part of speech, definitions, example, synonyms (closest first), antonyms
WORDS = {
    "gregarious": ("adjective", ["fond of company; sociable", "(of animals) living in flocks or herds"],
                   "She was a gregarious host who knew every guest by name.",
                   ["sociable", "outgoing", "convivial", "companionable", "extroverted", "friendly", "affable"],
                   ["unsociable", "reclusive", "introverted"]),
    "ephemeral": ("adjective", ["lasting for a very short time"],
                  "The beauty of the cherry blossom is ephemeral.",
                  ["fleeting", "transient", "short-lived", "momentary", "passing", "brief", "evanescent"],
                  ["permanent", "enduring", "lasting"]),
    "ubiquitous": ("adjective", ["present, appearing or found everywhere"],
                   "Smartphones have become ubiquitous on city trains.",
                   ["omnipresent", "everywhere", "pervasive", "universal", "widespread", "rife"],
                   ["rare", "scarce"]),
    "serendipity": ("noun", ["the occurrence of events by chance in a happy or beneficial way"],
                    "By pure serendipity, they sat next to each other on the plane.",
                    ["chance", "happy accident", "fluke", "luck", "fortuity", "good fortune"],
                    ["misfortune", "design"]),
    "meticulous": ("adjective", ["showing great attention to detail; very careful and precise"],
                   "He kept meticulous records of every expense.",
                   ["careful", "precise", "thorough", "scrupulous", "painstaking", "exact", "fastidious"],
                   ["careless", "sloppy", "slapdash"]),
    "candid": ("adjective", ["truthful and straightforward; frank", "(of a photograph) taken informally"],
               "Thank you for your candid answer.",
               ["frank", "honest", "open", "forthright", "direct", "blunt", "sincere"],
               ["guarded", "evasive", "secretive"]),
    "benevolent": ("adjective", ["well meaning and kindly", "serving a charitable purpose"],
                   "A benevolent neighbour paid for the new playground.",
                   ["kind", "kindly", "generous", "charitable", "compassionate", "good-hearted", "altruistic"],
                   ["malevolent", "unkind", "mean"]),
    "resilient": ("adjective", ["able to recover quickly from difficulty", "able to spring back into shape"],
                  "Children are often remarkably resilient.",
                  ["tough", "hardy", "strong", "adaptable", "buoyant", "irrepressible"],
                  ["fragile", "vulnerable"]),
    "ambiguous": ("adjective", ["open to more than one interpretation; not having one obvious meaning"],
                  "The last sentence of the contract is ambiguous.",
                  ["unclear", "equivocal", "vague", "obscure", "cryptic", "open to debate"],
                  ["clear", "unambiguous", "definite"]),
    "pragmatic": ("adjective", ["dealing with things sensibly and realistically"],
                  "We need a pragmatic approach rather than a perfect one.",
                  ["practical", "realistic", "sensible", "down-to-earth", "businesslike", "hard-headed"],
                  ["idealistic", "impractical"]),
    "eloquent": ("adjective", ["fluent or persuasive in speaking or writing"],
                 "She gave an eloquent speech at the wedding.",
                 ["articulate", "expressive", "persuasive", "fluent", "silver-tongued", "well spoken"],
                 ["inarticulate", "tongue-tied"]),
    "frugal": ("adjective", ["sparing or economical with money or food", "simple and plain, costing little"],
               "They lived a frugal life and saved for a house.",
               ["thrifty", "economical", "careful", "sparing", "prudent", "penny-wise"],
               ["extravagant", "wasteful", "lavish"]),
    "tenacious": ("adjective", ["not readily letting go of or giving up; persistent"],
                  "A tenacious reporter, she called every source twice.",
                  ["persistent", "determined", "dogged", "resolute", "steadfast", "unwavering"],
                  ["irresolute", "half-hearted"]),
    "lethargic": ("adjective", ["sluggish and apathetic; lacking energy"],
                  "The heat made everyone lethargic by the afternoon.",
                  ["sluggish", "listless", "languid", "drowsy", "weary", "torpid"],
                  ["energetic", "lively", "vigorous"]),
    "ominous": ("adjective", ["giving the impression that something bad is going to happen"],
                "There was an ominous silence after the announcement.",
                ["threatening", "menacing", "foreboding", "sinister", "portentous"],
                ["auspicious", "promising"]),
    "mundane": ("adjective", ["lacking interest or excitement; dull", "of this earthly world"],
                "He spent the morning on mundane tasks like filing.",
                ["humdrum", "ordinary", "routine", "everyday", "banal", "dull"],
                ["extraordinary", "exciting"]),
    "obsolete": ("adjective", ["no longer produced or used; out of date"],
                 "Fax machines are nearly obsolete.",
                 ["outdated", "outmoded", "antiquated", "defunct", "disused", "old-fashioned"],
                 ["current", "modern", "new"]),
    "diligent": ("adjective", ["having or showing care and conscientiousness in one's work"],
                 "After months of diligent practice she passed the exam.",
                 ["hard-working", "industrious", "conscientious", "assiduous", "careful", "thorough"],
                 ["lazy", "negligent", "careless"]),
    "happy": ("adjective", ["feeling or showing pleasure or contentment", "willing to do something"],
              "I'm happy to help with the move.",
              ["cheerful", "joyful", "glad", "content", "delighted", "merry", "pleased", "jolly"],
              ["sad", "unhappy", "miserable"]),
    "big": ("adjective", ["of considerable size or extent", "important or serious"],
            "They live in a big house by the river.",
            ["large", "huge", "enormous", "vast", "sizeable", "massive", "substantial", "great"],
            ["small", "little", "tiny"]),
    "fast": ("adjective", ["moving or capable of moving at high speed", "(of a clock) ahead of the correct time"],
             "It was the fastest train in the country.",
             ["quick", "rapid", "swift", "speedy", "brisk", "hasty", "fleet"],
             ["slow", "sluggish"]),
    "brave": ("adjective", ["ready to face and endure danger or pain; showing courage"],
              "It was brave of you to speak up.",
              ["courageous", "bold", "fearless", "daring", "valiant", "heroic", "intrepid"],
              ["cowardly", "timid", "fearful"]),
    "quiet": ("adjective", ["making little or no noise", "calm and peaceful"],
              "We found a quiet table at the back.",
              ["silent", "hushed", "soft", "muted", "peaceful", "calm", "tranquil"],
              ["loud", "noisy", "rowdy"]),
    "begin": ("verb", ["to start; perform or undergo the first part of an action"],
              "The concert will begin at eight.",
              ["start", "commence", "launch", "initiate", "embark on", "set about", "kick off"],
              ["end", "finish", "conclude"]),
    "help": ("verb", ["to make it easier for someone to do something", "to improve a situation"],
             "Could you help me carry these boxes?",
             ["assist", "aid", "support", "lend a hand", "back", "abet", "serve"],
             ["hinder", "impede", "obstruct"]),
    "cautious": ("adjective", ["careful to avoid potential problems or dangers"],
                 "Be cautious when driving on icy roads.",
                 ["careful", "wary", "prudent", "circumspect", "guarded", "vigilant", "chary"],
                 ["reckless", "rash", "careless"]),
    "vivid": ("adjective", ["producing powerful feelings or strong, clear images", "(of colour) intensely deep"],
              "She has vivid memories of the storm.",
              ["bright", "colourful", "graphic", "striking", "intense", "lifelike", "evocative"],
              ["dull", "faded", "vague"]),
}


class ToolError(Exception):
    def __init__(self, message, code, data=None):
        super().__init__(message)
        self.message, self.code, self.data = message, code, data


def entry(args):
    word = args.get("word")
    if not isinstance(word, str) or not word.strip():
        raise ToolError("word must be a non-empty string.", "invalid_arguments")
    key = word.strip().strip("'\"“”‘’").lower()
    if key not in WORDS:
        close = difflib.get_close_matches(key, list(WORDS), n=3, cutoff=0.7)
        if close:
            hint = "Did you mean " + " or ".join(close) + "?"
        else:
            hint = f"The dictionary has {len(WORDS)} entries: " + ", ".join(sorted(WORDS)) + "."
        raise ToolError(f"'{word.strip()}' is not in the dictionary. {hint}", "unknown_word",
                        {"suggestions": close, "known": sorted(WORDS)})
    return key, WORDS[key]


def define_word(args):
    word, (pos, senses, example, _, _) = entry(args)
    result = {"word": word, "partOfSpeech": pos, "definitions": senses, "example": example}
    text = f"{word} ({pos}): " + "; ".join(f"{n}. {s}" for n, s in enumerate(senses, 1)) + f'. Example: "{example}"'
    return result, text


def find_synonyms(args):
    limit = args.get("limit", 5)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 20:
        raise ToolError("limit must be an integer from 1 to 20.", "invalid_arguments")
    word, (pos, _, _, synonyms, antonyms) = entry(args)
    result = {"word": word, "partOfSpeech": pos, "synonyms": synonyms[:limit], "antonyms": antonyms}
    text = f"{word} ({pos}) — synonyms: {', '.join(synonyms[:limit])}; antonyms: {', '.join(antonyms)}."
    return result, text


TOOLS = {"defineWord": define_word, "findSynonyms": find_synonyms}


def main():
    try:
        try:
            request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise ToolError(f"The request on stdin is not JSON ({e}).", "bad_request") from e
        if not isinstance(request, dict) or not isinstance(request.get("arguments"), dict):
            raise ToolError("The request has no arguments object.", "bad_request")
        handler = TOOLS.get(request.get("tool"))
        if handler is None:
            raise ToolError(f"This plugin has no tool named {request.get('tool')!r}.", "unknown_tool")
        result, text = handler(request["arguments"])
        reply, status = {"result": result, "text": text}, 0
    except ToolError as e:
        error = {"message": e.message, "code": e.code}
        if e.data is not None:
            error["data"] = e.data
        reply, status = {"error": error}, 1
    sys.stdout.buffer.write((json.dumps(reply, ensure_ascii=False) + "\n").encode("utf-8"))
    return status


if __name__ == "__main__":
    sys.exit(main())
