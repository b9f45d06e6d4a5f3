/// Python that toolhost runs in llama-cpp-python's server before the server starts (both the private and the shared
/// one): two changes of speed that leave every reply as it was.
///
/// - **Grammar last.** llama-cpp-python puts a constrained reply's grammar at the front of its sampler chain, so the
///   grammar is checked against every token of the vocabulary (151,936 for Qwen) for each token generated, which
///   doubled the time per token of a guided reply. The patch samples with the rest of the chain and checks only the
///   chosen token against the grammar; the whole vocabulary goes through the grammar only when that token is refused,
///   as llama.cpp's own `common_sampler` does. Greedy and seeded replies are the same tokens as before.
/// - **A saved prompt prefix.** With `TOOLHOST_PROMPT_CACHE` set to a folder, the model's state after the system
///   message (the instructions and the tool list: everything up to the first end-of-turn token, 32 tokens or more) is
///   saved there once per model and tool set (files 0600 in a 0700 folder, the newest 8 kept), and a server that
///   starts later restores it instead of reading that message again. The key is the model file (path, size, mtime),
///   llama-cpp-python's version and the context's settings (size, cache types, attention); a file that is not the
///   user's own or is group- or world-writable is not read. Files of any key unused for 30 days are removed. A
///   failure to save or restore is a line in the server log, never a failed request.
enum LlamaServerPatches {
  static let source = """
    import ctypes, math, sys
    import numpy as np
    import llama_cpp
    from llama_cpp import llama as _llama

    _init_sampler = _llama.Llama._init_sampler

    class _GrammarLast:
        # Samples with the chain alone and checks only the chosen token against the grammar; the whole vocabulary goes
        # through the grammar only when that token is refused, as llama.cpp's own common sampler does.
        def __init__(self, model, chain, grammar):
            self.chain = chain
            self.grammar = llama_cpp.llama_sampler_init_grammar(
                model._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
            self.n = model.n_vocab()
            self.buf = (llama_cpp.llama_token_data * self.n)()
            self.view = np.ctypeslib.as_array(self.buf)
            self.ids = np.arange(self.n, dtype=np.int32)
            self.one = (llama_cpp.llama_token_data * 1)()
        def _apply(self, sampler, data, size):
            cur = llama_cpp.llama_token_data_array(
                data=ctypes.cast(data, ctypes.POINTER(llama_cpp.llama_token_data)), size=size, selected=-1,
                sorted=False)
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(cur))
            return cur
        def _fill(self, logits):
            self.view["id"] = self.ids
            self.view["logit"] = logits
            self.view["p"] = 0.0
        def sample(self, ctx, idx=-1):
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx.ctx, idx), shape=(self.n,))
            self._fill(logits)
            cur = self._apply(self.chain.sampler, self.buf, self.n)
            token = cur.data[cur.selected].id
            self.one[0].id, self.one[0].logit, self.one[0].p = token, 1.0, 0.0
            self._apply(self.grammar, self.one, 1)
            if math.isinf(self.one[0].logit):
                self._fill(logits)
                cur = self._apply(self.grammar, self.buf, self.n)
                llama_cpp.llama_sampler_apply(self.chain.sampler, ctypes.byref(cur))
                token = cur.data[cur.selected].id
            llama_cpp.llama_sampler_accept(self.grammar, token)
            llama_cpp.llama_sampler_accept(self.chain.sampler, token)
            return token
        def __del__(self):
            if self.grammar is not None:
                llama_cpp.llama_sampler_free(self.grammar)
                self.grammar = None

    def _grammar_last(self, *args, **kwargs):
        grammar = kwargs.pop("grammar", None)
        chain = _init_sampler(self, *args, grammar=None, **kwargs)
        return chain if grammar is None else _GrammarLast(self, chain, grammar)

    _llama.Llama._init_sampler = _grammar_last

    # A saved prompt prefix: the model's state after the system message (instructions and tool list), kept on disk so
    # that a freshly started server does not read that message again.
    import hashlib, json, os, stat, tempfile, time
    _generate = _llama.Llama.generate
    _cache_dir = os.environ.get("TOOLHOST_PROMPT_CACHE")
    # Prefixes this process knows are saved, so a warm server touches the folder only for a system message it has
    # not seen.
    _saved = set()

    def _common(a, b):
        n = 0
        for x, y in zip(a, b):
            if x != y:
                break
            n += 1
        return n

    def _model_key(self):
        st = os.stat(self.model_path)
        # Whatever shapes the saved state: the model file, llama.cpp's version and the context's settings.
        params = self.context_params
        layout = [getattr(params, f, None) for f in ("n_ctx", "type_k", "type_v", "flash_attn_type", "swa_full",
                                                      "kv_unified", "rope_freq_base", "rope_freq_scale")]
        identity = "%s|%d|%d|%s|%r" % (os.path.realpath(self.model_path), st.st_size, st.st_mtime_ns,
                                       llama_cpp.__version__, layout)
        return hashlib.sha256(identity.encode()).hexdigest()[:16]

    def _own_file(path):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
            os.close(fd)
            raise OSError("not the user's own file")
        return os.fdopen(fd, "rb")

    def _entries(self):
        key = _model_key(self)
        try:
            names = os.listdir(_cache_dir)
        except OSError:
            return key, []
        found = []
        for name in names:
            if name.startswith("prefix-" + key) and name.endswith(".json"):
                try:
                    with _own_file(os.path.join(_cache_dir, name)) as f:
                        found.append((name[:-5], json.load(f)["tokens"]))
                except (OSError, ValueError, KeyError):
                    pass
        return key, found

    def _prefix_length(self, tokens):
        eot = llama_cpp.llama_vocab_eot(self._model.vocab)
        if eot < 0:
            eot = self.token_eos()
        return tokens.index(eot) + 1 if eot in tokens else 0

    def _restore(self, tokens):
        have = _common(self._input_ids[: self.n_tokens].tolist(), tokens)
        n = _prefix_length(self, tokens)
        if 0 < n <= have:
            return  # the live state already holds the system message
        key, entries = _entries(self)
        best = max(entries, key=lambda e: _common(e[1], tokens), default=None)
        if best is None or _common(best[1], tokens) < have + 16:
            return
        try:
            with _own_file(os.path.join(_cache_dir, best[0] + ".bin")) as f:
                data = f.read()
        except OSError:
            return
        buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if llama_cpp.llama_state_set_data(self._ctx.ctx, buffer, len(data)) != len(data):
            return
        restored = len(best[1])
        self.input_ids[:restored] = best[1]
        self.n_tokens = restored
        self._requires_eval = True
        try:
            os.utime(os.path.join(_cache_dir, best[0] + ".json"))
        except OSError:
            pass
        print("toolhost: restored a saved prompt prefix of %d tokens" % restored, file=sys.stderr)

    def _remember(self, tokens):
        n = _prefix_length(self, tokens)
        if n < 32 or self.n_tokens < n or _common(self._input_ids[:n].tolist(), tokens[:n]) < n:
            return
        prefix = hashlib.sha256(repr(tokens[:n]).encode()).hexdigest()[:16]
        if prefix in _saved:
            return
        key, entries = _entries(self)
        if any(_common(e[1], tokens) >= n for e in entries):
            _saved.add(prefix)
            return
        size = llama_cpp.llama_state_get_size(self._ctx.ctx)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_get_data(self._ctx.ctx, buffer, size)
        name = "prefix-%s-%s" % (key, prefix)
        os.makedirs(_cache_dir, mode=0o700, exist_ok=True)
        index = json.dumps({"tokens": tokens[:n]}).encode()
        for suffix, payload in ((".bin", bytes(buffer)[:written]), (".json", index)):
            fd, tmp = tempfile.mkstemp(dir=_cache_dir)
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
            os.replace(tmp, os.path.join(_cache_dir, name + suffix))
        _saved.add(prefix)
        # Keep the newest few tool sets of this key, and nothing of any key (an older llama.cpp, a removed model)
        # unused for 30 days.
        old = sorted((os.path.getmtime(os.path.join(_cache_dir, e[0] + ".json")), e[0]) for e in entries)
        stale = [e for _, e in old[:-7]]
        for other in os.listdir(_cache_dir):
            if other.startswith("prefix-") and other.endswith(".json"):
                try:
                    if time.time() - os.path.getmtime(os.path.join(_cache_dir, other)) > 30 * 86400:
                        stale.append(other[:-5])
                except OSError:
                    pass  # removed meanwhile by another server
        for name in stale:
            for suffix in (".json", ".bin"):
                try:
                    os.unlink(os.path.join(_cache_dir, name + suffix))
                except OSError:
                    pass
        print("toolhost: saved a prompt prefix of %d tokens" % n, file=sys.stderr)

    def _generate_from_saved_prefix(self, tokens, *args, **kwargs):
        tokens = list(tokens)
        try:
            _restore(self, tokens)
        except Exception as e:
            print("toolhost: no saved prompt prefix: %s" % e, file=sys.stderr)
        try:
            yield from _generate(self, tokens, *args, **kwargs)
        finally:
            try:
                _remember(self, tokens)
            except Exception as e:
                print("toolhost: the prompt prefix was not saved: %s" % e, file=sys.stderr)

    if _cache_dir:
        _llama.Llama.generate = _generate_from_saved_prefix
    """
}
