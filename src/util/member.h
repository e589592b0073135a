/* member.h - an integer member of a struct reached through its offset, for
 * the tables that map a struct's members to the fields of a format (the JSON
 * report in store/json.c, the store's columns in store/store.c). Such a
 * member is an int or an int64_t, told apart by its size. */
#ifndef KB_MEMBER_H
#define KB_MEMBER_H

#include <stddef.h>
#include <stdint.h>

/* The value of the integer member at m, size bytes (an int or an int64_t). */
static inline int64_t kb_int_member(const void *m, size_t size)
{
    if (size == sizeof(int))
        return *(const int *)m;
    return *(const int64_t *)m;
}

/* Stores v in the integer member at m, size bytes (an int: truncated). */
static inline void kb_set_int_member(void *m, size_t size, int64_t v)
{
    if (size == sizeof(int))
        *(int *)m = (int)v;
    else
        *(int64_t *)m = v;
}

#endif
