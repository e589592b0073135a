/* main.c - kbench's entry point: the command table and dispatch (the helpers
 * every command shares are cli.c's). Only this file's main() exits. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const kb_cmd commands[] = {
    {"list", cmd_list, "operators, variants, dtypes and default shapes"},
    {"devices", cmd_devices, "visible GPUs, their properties and calibrated ceilings"},
    {"calibrate", cmd_calibrate, "measure this GPU's ceilings and store them"},
    {"run", cmd_run, "verify, time and store variants of an operator"},
    {"report", cmd_report, "print a stored run or a JSON report (text, md, json, csv, html)"},
    {"import", cmd_import, "load JSON reports into the store"},
    {"compare", cmd_compare, "compare two runs or reports case by case (exit 1 on a regression)"},
    {"new", cmd_new, "write NAME.cu: a starting variant of your own for an operator"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: kbench <command> [options]   (kbench help <command>, or kbench <command>\n"
               "       -h, for its options)\n\n"
               "commands:\n");
    for (size_t i = 0; i < KB_COUNT(commands); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nexit codes: 0 success, 1 a check failed (wrong result), 2 usage error,\n"
               "3 environment or runtime error (no GPU, CUDA/SQLite/I-O failure)\n"
               "store: --db PATH, else $KBENCH_DB, else " KB_DEFAULT_DB "\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return KB_EUSAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 && argc > 2) { /* `kbench help CMD` is `kbench CMD -h` */
        char help[] = "-h";
        for (size_t i = 0; i < KB_COUNT(commands); i++)
            if (strcmp(commands[i].name, argv[2]) == 0)
                return commands[i].fn(2, (char *[]){argv[2], help, NULL});
        return kb_cli_error(KB_EUSAGE, "unknown command '%s' (see 'kbench help')", argv[2]);
    }
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return kb_cli_finish_stdout(KB_OK);
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("kbench %s (%s)\n", KB_VERSION, KB_GIT);
        return kb_cli_finish_stdout(KB_OK);
    }
    for (size_t i = 0; i < KB_COUNT(commands); i++)
        if (strcmp(commands[i].name, name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    const char *best = NULL;
    int best_d = 3;
    for (size_t i = 0; i < KB_COUNT(commands); i++) {
        int d = kb_edit_distance(name, commands[i].name);
        if (d < best_d) {
            best_d = d;
            best = commands[i].name;
        }
    }
    if (best)
        return kb_cli_error(KB_EUSAGE, "unknown command '%s' (did you mean '%s'?)", name, best);
    return kb_cli_error(KB_EUSAGE, "unknown command '%s' (see 'kbench help')", name);
}
