/*
 * searchBreadDatabase -- a toolhost plugin in C (jansson).
 *
 * Reads one request object from stdin ({"toolhost":1,"tool":...,"arguments":
 * {...},"callId":...}), searches the bundled recipes.json (in the working
 * directory, which the host sets to the plugin's folder) and writes one reply
 * object to stdout: {"result":...,"text":...} with exit status 0, or
 * {"error":{"message","code"[,"data"]}} with exit status 1.
 *
 * Search: the term is split into words; a recipe matches when every word
 * occurs (case- and accent-insensitively, as a substring) in its name, origin,
 * tags or ingredient names. Ranking: the whole term in the name first, then by
 * where the words matched (name > tags > origin > ingredients), then database
 * order.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL_NAME "searchBreadDatabase"
#define DATABASE_FILE "recipes.json"
#define DEFAULT_LIMIT 3
#define MAX_LIMIT 6
#define MAX_REQUEST_BYTES (1 << 20)
#define MAX_WORDS 16

enum { W_INGREDIENT = 2, W_ORIGIN = 3, W_TAG = 4, W_NAME = 8, W_PHRASE_IN_NAME = 32 };

/* ---------------------------------------------------------------- output */

/* Writes reply (a new reference, stolen) and its newline to stdout. */
static int emit(json_t *reply, int status)
{
    char *text = reply ? json_dumps(reply, 0) : NULL;
    json_decref(reply);
    if (!text) {
        fputs("{\"error\": {\"message\": \"out of memory while writing the reply\", "
              "\"code\": \"internal\"}}\n",
              stdout);
        fflush(stdout);
        return 1;
    }
    int failed = fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF || fflush(stdout) != 0;
    free(text);
    if (failed) {
        fprintf(stderr, "bread: could not write the reply to stdout\n");
        return 1;
    }
    return status;
}

/* Cuts a trailing incomplete UTF-8 sequence (left by a truncating snprintf). */
static void trim_partial_utf8(char *s)
{
    size_t len = strlen(s), i = len;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
        i--;
    if (i == 0 || (unsigned char)s[i - 1] < 0xC0)
        return; /* ends in ASCII */
    unsigned char lead = (unsigned char)s[i - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (len - (i - 1) < need)
        s[i - 1] = '\0';
}

/* An error reply; data (may be NULL) is stolen. Returns the exit status. */
static int fail(const char *code, json_t *data, const char *format, ...)
{
    char message[1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(message, sizeof message, format, ap);
    va_end(ap);
    trim_partial_utf8(message);

    json_t *msg = json_string(message);
    if (!msg)
        msg = json_string("the tool failed (its error message was not valid UTF-8)");
    /* json_object_set_new consumes the value even when it fails. */
    json_t *error = json_object();
    int ok = json_object_set_new(error, "message", msg) == 0;
    ok = json_object_set_new(error, "code", json_string(code)) == 0 && ok;
    if (data)
        ok = json_object_set_new(error, "data", data) == 0 && ok;
    json_t *reply = json_object();
    ok = json_object_set_new(reply, "error", error) == 0 && ok;
    if (!ok) {
        json_decref(reply);
        reply = NULL;
    }
    fprintf(stderr, "bread: %s: %s\n", code, message);
    emit(reply, 1);
    return 1;
}

/* ---------------------------------------------------------------- text */

/* Latin-1 supplement letters (U+00C0..U+00FF, UTF-8 C3 80..C3 BF) without
 * their accents, in lower case; NULL keeps the character (x and ÷). */
static const char *const latin1_fold[64] = {
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
    "d", "n", "o", "o", "o", "o", "o", NULL, "o", "u", "u", "u", "u", "y", "th", "ss",
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i",
    "d", "n", "o", "o", "o", "o", "o", NULL, "o", "u", "u", "u", "u", "y", "th", "y",
};

/* A new string: s in lower case, with the accents of Latin-1 letters removed
 * ("Pão" -> "pao", "Rugbrød" -> "rugbrod"). NULL when out of memory. */
static char *fold(const char *s)
{
    size_t len = strlen(s);
    char *out = malloc(len + 1); /* a 2-byte sequence folds to at most 2 bytes */
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0xC3 && i + 1 < len && ((unsigned char)s[i + 1] & 0xC0) == 0x80) {
            const char *f = latin1_fold[(unsigned char)s[i + 1] - 0x80];
            if (f) {
                size_t flen = strlen(f);
                memcpy(out + o, f, flen);
                o += flen;
                i++;
                continue;
            }
        }
        out[o++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : (char)c;
    }
    out[o] = '\0';
    return out;
}

/* 1 if folded needle occurs in haystack (folded here), 0 if not, -1 on OOM. */
static int contains(const char *haystack, const char *needle)
{
    char *h = fold(haystack);
    if (!h)
        return -1;
    int found = strstr(h, needle) != NULL;
    free(h);
    return found;
}

/* "45 min", "3 h 30 min", "24 h", "3 days". */
static void format_duration(long minutes, char *buf, size_t size)
{
    if (minutes < 60)
        snprintf(buf, size, "%ld min", minutes);
    else if (minutes >= 2 * 24 * 60 && minutes % (24 * 60) == 0)
        snprintf(buf, size, "%ld days", minutes / (24 * 60));
    else if (minutes % 60 == 0)
        snprintf(buf, size, "%ld h", minutes / 60);
    else
        snprintf(buf, size, "%ld h %ld min", minutes / 60, minutes % 60);
}

/* A growing string for the human-readable rendering. */
struct text {
    char *data;
    size_t len, cap;
    int oom;
};

static void text_append(struct text *t, const char *format, ...)
{
    if (t->oom)
        return;
    for (;;) {
        size_t room = t->cap - t->len;
        va_list ap;
        va_start(ap, format);
        int n = vsnprintf(t->data ? t->data + t->len : NULL, t->data ? room : 0, format, ap);
        va_end(ap);
        if (n < 0) {
            t->oom = 1;
            return;
        }
        if (t->data && (size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = (t->cap ? t->cap * 2 : 256) + (size_t)n + 1;
        char *grown = realloc(t->data, cap);
        if (!grown) {
            t->oom = 1;
            return;
        }
        t->data = grown;
        t->cap = cap;
    }
}

/* ---------------------------------------------------------------- input */

/* The whole of stdin as a NUL-terminated string; NULL on error (*too_big set
 * when it exceeds MAX_REQUEST_BYTES). */
static char *read_stdin(size_t *length, int *too_big)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    *too_big = 0;
    if (!buf)
        return NULL;
    for (;;) {
        if (cap - len < 2) {
            if (cap >= MAX_REQUEST_BYTES) {
                *too_big = 1;
                free(buf);
                return NULL;
            }
            char *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                return NULL;
            }
            buf = grown;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len - 1, stdin);
        len += n;
        if (n == 0) {
            if (ferror(stdin)) {
                free(buf);
                return NULL;
            }
            break;
        }
    }
    buf[len] = '\0';
    *length = len;
    return buf;
}

/* A JSON integer, or a real with an integral value (3.0), in [lo, hi]. */
static int integer_in_range(const json_t *v, long lo, long hi, long *out)
{
    double d;
    if (json_is_integer(v))
        d = (double)json_integer_value(v);
    else if (json_is_real(v))
        d = json_real_value(v);
    else
        return 0;
    if (d != (double)(long)d || d < (double)lo || d > (double)hi)
        return 0;
    *out = (long)d;
    return 1;
}

/* ---------------------------------------------------------------- database */

/* Checks the shape of one recipe; returns a description of the problem or NULL. */
static const char *recipe_problem(const json_t *r)
{
    if (!json_is_object(r))
        return "not an object";
    if (!json_is_string(json_object_get(r, "name")))
        return "name is not a string";
    if (!json_is_string(json_object_get(r, "origin")))
        return "origin is not a string";
    if (!json_is_string(json_object_get(r, "method")))
        return "method is not a string";
    if (!json_is_number(json_object_get(r, "hydration")))
        return "hydration is not a number";
    if (!json_is_integer(json_object_get(r, "totalMinutes")))
        return "totalMinutes is not an integer";
    const json_t *tags = json_object_get(r, "tags");
    if (!json_is_array(tags))
        return "tags is not an array";
    size_t i;
    const json_t *v;
    json_array_foreach(tags, i, v)
    {
        if (!json_is_string(v))
            return "a tag is not a string";
    }
    const json_t *ingredients = json_object_get(r, "ingredients");
    if (!json_is_array(ingredients) || json_array_size(ingredients) == 0)
        return "ingredients is not a non-empty array";
    json_array_foreach(ingredients, i, v)
    {
        if (!json_is_object(v) || !json_is_string(json_object_get(v, "name"))
            || !json_is_number(json_object_get(v, "grams")))
            return "an ingredient lacks a name or grams";
    }
    return NULL;
}

/* Loads and checks the database. On failure writes the error reply, sets
 * *status and returns NULL. */
static json_t *load_database(int *status)
{
    json_error_t err;
    json_t *db = json_load_file(DATABASE_FILE, 0, &err);
    if (!db && json_error_code(&err) == json_error_cannot_open_file) {
        *status = fail("database_unavailable", NULL,
            "The recipe database could not be opened: %s (it is read from the working "
            "directory, which should be the plugin's folder).",
            err.text);
        return NULL;
    }
    if (!db) {
        *status = fail("database_corrupt", NULL,
            "The recipe database %s is not valid JSON: %s (line %d).", DATABASE_FILE, err.text,
            err.line);
        return NULL;
    }
    const json_t *recipes = json_object_get(db, "recipes");
    if (!json_is_array(recipes)) {
        json_decref(db);
        *status = fail("database_corrupt", NULL,
            "The recipe database %s has no \"recipes\" array.", DATABASE_FILE);
        return NULL;
    }
    size_t i;
    const json_t *r;
    json_array_foreach(recipes, i, r)
    {
        const char *problem = recipe_problem(r);
        if (problem) {
            json_decref(db);
            *status = fail("database_corrupt", NULL,
                "The recipe database %s is malformed: recipe %zu: %s.", DATABASE_FILE, i + 1,
                problem);
            return NULL;
        }
    }
    return db;
}

/* ---------------------------------------------------------------- search */

struct match {
    size_t index;
    int score;
    unsigned fields; /* bit set of F_* */
};

enum { F_NAME = 1, F_ORIGIN = 2, F_TAGS = 4, F_INGREDIENTS = 8 };

static int by_rank(const void *a, const void *b)
{
    const struct match *x = a, *y = b;
    if (x->score != y->score)
        return y->score - x->score;
    return (x->index > y->index) - (x->index < y->index);
}

/* Scores one recipe against the folded words; 0 = no match, -1 = OOM. */
static int score_recipe(const json_t *r, const char *phrase, char *const *words, size_t nwords,
    unsigned *fields)
{
    const char *name = json_string_value(json_object_get(r, "name"));
    const char *origin = json_string_value(json_object_get(r, "origin"));
    const json_t *tags = json_object_get(r, "tags");
    const json_t *ingredients = json_object_get(r, "ingredients");
    int score = 0;
    *fields = 0;

    int hit = contains(name, phrase);
    if (hit < 0)
        return -1;
    if (hit)
        score += W_PHRASE_IN_NAME;

    for (size_t w = 0; w < nwords; w++) {
        int best = 0, found;
        if ((found = contains(name, words[w])) < 0)
            return -1;
        if (found) {
            best = W_NAME;
            *fields |= F_NAME;
        }
        size_t i;
        const json_t *v;
        json_array_foreach(tags, i, v)
        {
            if ((found = contains(json_string_value(v), words[w])) < 0)
                return -1;
            if (found) {
                best = best > W_TAG ? best : W_TAG;
                *fields |= F_TAGS;
            }
        }
        if ((found = contains(origin, words[w])) < 0)
            return -1;
        if (found) {
            best = best > W_ORIGIN ? best : W_ORIGIN;
            *fields |= F_ORIGIN;
        }
        json_array_foreach(ingredients, i, v)
        {
            if ((found = contains(json_string_value(json_object_get(v, "name")), words[w])) < 0)
                return -1;
            if (found) {
                best = best > W_INGREDIENT ? best : W_INGREDIENT;
                *fields |= F_INGREDIENTS;
            }
        }
        if (best == 0)
            return 0; /* every word must match somewhere */
        score += best;
    }
    return score;
}

/* The recipe with a "matchedIn" list added: a new reference or NULL. */
static json_t *result_recipe(const json_t *recipe, unsigned fields)
{
    json_t *copy = json_copy((json_t *)recipe);
    json_t *where = json_array();
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{F_NAME, "name"}, {F_TAGS, "tags"}, {F_ORIGIN, "origin"},
        {F_INGREDIENTS, "ingredients"}};
    int ok = copy && where;
    for (size_t i = 0; ok && i < sizeof names / sizeof names[0]; i++)
        if (fields & names[i].bit)
            ok = json_array_append_new(where, json_string(names[i].name)) == 0;
    if (ok && json_object_set_new(copy, "matchedIn", where) == 0)
        return copy;
    if (!ok)
        json_decref(where);
    json_decref(copy);
    return NULL;
}

static int search(const json_t *db, const char *term, long limit)
{
    int status = 1;
    char *phrase = NULL, *scratch = NULL;
    char *words[MAX_WORDS];
    size_t nwords = 0;
    struct match *matches = NULL;
    json_t *list = NULL, *result = NULL, *reply = NULL;
    struct text text = {0};
    const json_t *recipes = json_object_get(db, "recipes");
    size_t total = json_array_size(recipes), nmatches = 0;

    /* The folded term, trimmed, and its words. */
    phrase = fold(term);
    scratch = fold(term);
    if (!phrase || !scratch)
        goto oom;
    for (char *save = NULL, *w = strtok_r(scratch, " \t\r\n", &save); w;
        w = strtok_r(NULL, " \t\r\n", &save)) {
        if (nwords == MAX_WORDS) {
            status = fail("invalid_arguments", NULL,
                "searchTerm has more than %d words; use one to three keywords.", MAX_WORDS);
            goto done;
        }
        words[nwords++] = w;
    }
    if (nwords == 0) {
        status = fail("invalid_arguments", NULL,
            "searchTerm is blank; give a keyword such as rye, baguette or flatbread.");
        goto done;
    }
    /* Collapse the phrase's whitespace runs to single spaces, trimmed. */
    {
        size_t o = 0;
        for (size_t w = 0; w < nwords; w++) {
            size_t n = strlen(words[w]);
            if (o)
                phrase[o++] = ' ';
            memmove(phrase + o, words[w], n);
            o += n;
        }
        phrase[o] = '\0';
    }

    matches = calloc(total ? total : 1, sizeof *matches);
    if (!matches)
        goto oom;
    for (size_t i = 0; i < total; i++) {
        unsigned fields;
        int score = score_recipe(json_array_get(recipes, i), phrase, words, nwords, &fields);
        if (score < 0)
            goto oom;
        if (score > 0)
            matches[nmatches++] = (struct match){i, score, fields};
    }
    qsort(matches, nmatches, sizeof *matches, by_rank);

    size_t shown = nmatches < (size_t)limit ? nmatches : (size_t)limit;
    list = json_array();
    if (!list)
        goto oom;
    if (nmatches == 0)
        text_append(&text,
            "No recipes match \"%s\". Try a broader keyword: an ingredient (rye, semolina), "
            "a country (France) or a style (flatbread, sourdough, enriched).",
            term);
    else
        text_append(&text, "%zu of %zu recipe%s matching \"%s\":", shown, nmatches,
            nmatches == 1 ? "" : "s", term);
    for (size_t k = 0; k < shown; k++) {
        const json_t *r = json_array_get(recipes, matches[k].index);
        json_t *item = result_recipe(r, matches[k].fields);
        if (!item || json_array_append_new(list, item) != 0)
            goto oom;
        char duration[64];
        format_duration((long)json_integer_value(json_object_get(r, "totalMinutes")), duration,
            sizeof duration);
        text_append(&text, "\n%zu. %s — %s; %.0f%% hydration, %s", k + 1,
            json_string_value(json_object_get(r, "name")),
            json_string_value(json_object_get(r, "origin")),
            json_number_value(json_object_get(r, "hydration")), duration);
        /* One or two recipes are what someone asked to bake: show them whole. */
        if (shown <= 2) {
            size_t j;
            const json_t *ingredient;
            text_append(&text, "\n   Ingredients:");
            json_array_foreach(json_object_get(r, "ingredients"), j, ingredient)
            {
                text_append(&text, "%s %g g %s", j == 0 ? "" : ",",
                    json_number_value(json_object_get(ingredient, "grams")),
                    json_string_value(json_object_get(ingredient, "name")));
            }
            text_append(&text, ".\n   Method: %s", json_string_value(json_object_get(r, "method")));
        }
    }
    if (text.oom)
        goto oom;

    result = json_pack("{s:s, s:I, s:I, s:o}", "query", term, "count", (json_int_t)shown,
        "totalMatches", (json_int_t)nmatches, "recipes", list);
    list = NULL; /* stolen by json_pack, even on failure */
    if (!result)
        goto oom;
    reply = json_pack("{s:o, s:s}", "result", result, "text", text.data ? text.data : "");
    result = NULL;
    if (!reply)
        goto oom;
    status = emit(reply, 0);
    reply = NULL;
    goto done;

oom:
    status = fail("internal", NULL, "out of memory");
done:
    json_decref(reply);
    json_decref(result);
    json_decref(list);
    free(text.data);
    free(matches);
    free(scratch);
    free(phrase);
    return status;
}

/* ---------------------------------------------------------------- main */

int main(void)
{
    size_t length;
    int too_big;
    char *input = read_stdin(&length, &too_big);
    if (!input)
        return too_big ? fail("bad_request", NULL, "The request is larger than %d bytes.",
                             MAX_REQUEST_BYTES)
                       : fail("bad_request", NULL, "Could not read the request from stdin.");

    json_error_t err;
    json_t *request = json_loadb(input, length, 0, &err);
    free(input);
    if (!request)
        return fail("bad_request", NULL, "The request on stdin is not JSON: %s (line %d).",
            err.text, err.line);

    int status;
    const json_t *tool = json_object_get(request, "tool");
    const json_t *args = json_object_get(request, "arguments");
    const json_t *term = json_object_get(args, "searchTerm");
    const json_t *limit_value = json_object_get(args, "limit");
    long limit = DEFAULT_LIMIT;
    if (!json_is_object(request) || !json_is_object(args))
        status = fail("bad_request", NULL, "The request has no arguments object.");
    else if (!json_is_string(tool) || strcmp(json_string_value(tool), TOOL_NAME) != 0)
        status = fail("unknown_tool", NULL, "This plugin provides only " TOOL_NAME ", not %s.",
            json_is_string(tool) ? json_string_value(tool) : "(none)");
    else if (!json_is_string(term) || json_string_length(term) == 0)
        status = fail("invalid_arguments", NULL, "searchTerm must be a non-empty string.");
    else if (limit_value && !integer_in_range(limit_value, 1, MAX_LIMIT, &limit))
        status = fail("invalid_arguments", NULL, "limit must be an integer from 1 to %d.",
            MAX_LIMIT);
    else {
        json_t *db = load_database(&status);
        if (db) {
            status = search(db, json_string_value(term), limit);
            json_decref(db);
        }
    }
    json_decref(request);
    return status;
}
