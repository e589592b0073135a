/* env.h - switches read from the environment. */
#ifndef KB_ENV_H
#define KB_ENV_H

#ifdef __cplusplus
extern "C" {
#endif

/* The integer in environment variable name when it is set to a number in
 * [lo, hi], else dflt: the switches of the variants' alternative paths and
 * configurations (each variant's header comment names its own) and the
 * checks' threads (util/par.h). A case's process keeps its environment:
 * callers read a switch once, not at every launch inside the timed region. */
int kb_env_int(const char *name, int dflt, int lo, int hi);

#ifdef __cplusplus
}
#endif
#endif
