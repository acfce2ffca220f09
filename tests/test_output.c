/* test_output.c — writing outputs (common/output.h): a regular file is
 * replaced whole, a link is followed and stays a link, a device or FIFO is
 * written in place and never replaced, a directory is refused; stdout's
 * write errors are reported when it is closed, and a closed descriptor is
 * held so that no file takes its number. */
#include "support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/output.h"

static char dir[256];

static int setup(void **state)
{
    corun_test_mkdtemp(dir, sizeof(dir), "output");
    return 0;
}

static int teardown(void **state)
{
    corun_test_rmdir(dir);
    return 0;
}

/* dir/name, in one of two static buffers (two may be used at once). */
static const char *in_dir(const char *name)
{
    static char buf[2][512];
    static int i;
    i ^= 1;
    snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
    return buf[i];
}

/* The temporary name of this process's output p. */
static const char *tmp_of(const char *p)
{
    static char buf[600];
    snprintf(buf, sizeof(buf), "%s.tmp.%ld", p, (long)getpid());
    return buf;
}

static char *read_text(const char *p)
{
    static char buf[4096];
    FILE *f = fopen(p, "r");
    size_t n;
    assert_non_null(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void write_ok(const char *p, const char *text)
{
    char why[1024] = "";
    if (corun__output_write(p, text, strlen(text), CORUN_OUTPUT_SYNC, why, sizeof(why)) != 0) {
        fail_msg("writing %s: %s", p, why);
    }
}

static mode_t type_of(const char *p)
{
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    return st.st_mode & S_IFMT;
}

/* 1 when p is a character device: a test that writes to /dev/null or
 * /dev/full through the rules would replace it if something else had
 * already made it a regular file. */
static int is_device(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0 && S_ISCHR(st.st_mode);
}

static void regular_files_are_replaced_whole(void **state)
{
    const char *p = in_dir("out.txt");
    struct stat a, b;

    write_ok(p, "first\n");
    assert_string_equal(read_text(p), "first\n");
    assert_int_equal(stat(p, &a), 0);
    write_ok(p, "second\n");
    assert_string_equal(read_text(p), "second\n");
    assert_int_equal(stat(p, &b), 0);
    assert_true(a.st_ino != b.st_ino); /* a new file renamed over the old */
    assert_int_equal(access(tmp_of(p), F_OK), -1);
}

static void links_are_followed_and_kept(void **state)
{
    const char *target = in_dir("target.txt"), *link = in_dir("link.txt");
    char why[1024] = "";

    write_ok(target, "old\n");
    assert_int_equal(symlink("target.txt", link), 0);
    write_ok(link, "new\n");
    assert_int_equal(type_of(link), S_IFLNK);
    assert_int_equal(type_of(target), S_IFREG);
    assert_string_equal(read_text(target), "new\n");

    /* A link to nothing is written through: its target is created. */
    assert_int_equal(symlink("made.txt", in_dir("dangling")), 0);
    write_ok(in_dir("dangling"), "made\n");
    assert_int_equal(type_of(in_dir("dangling")), S_IFLNK);
    assert_string_equal(read_text(in_dir("made.txt")), "made\n");

    /* A link to /dev/full: written in place, and the write fails. */
    if (!is_device("/dev/full")) {
        return;
    }
    assert_int_equal(symlink("/dev/full", in_dir("full")), 0);
    assert_int_equal(corun__output_write(in_dir("full"), "x\n", 2, 0, why, sizeof(why)), -1);
    assert_non_null(strstr(why, strerror(ENOSPC)));
    assert_int_equal(type_of(in_dir("full")), S_IFLNK);
    assert_int_equal(type_of("/dev/full"), S_IFCHR);
}

static void fifos_are_written_in_place(void **state)
{
    const char *fifo = in_dir("fifo");
    char got[64] = "";
    pid_t pid;
    int st, fd;
    ssize_t n;

    assert_int_equal(mkfifo(fifo, 0644), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        _exit(corun__output_write(fifo, "through\n", 8, CORUN_OUTPUT_SYNC, NULL, 0) == 0 ? 0 : 1);
    }
    fd = open(fifo, O_RDONLY);
    assert_true(fd >= 0);
    n = read(fd, got, sizeof(got) - 1);
    close(fd);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(n, 8);
    assert_string_equal(got, "through\n");
    assert_int_equal(type_of(fifo), S_IFIFO);
}

static void devices_are_not_replaced(void **state)
{
    char why[1024] = "";

    /* /dev/null takes the output in place and stays a device (as root the
     * old rename replaced it). */
    if (!is_device("/dev/null")) {
        skip();
    }
    assert_int_equal(corun__output_write("/dev/null", "x", 1, 0, why, sizeof(why)), 0);
    assert_int_equal(type_of("/dev/null"), S_IFCHR);
    assert_int_equal(access(tmp_of("/dev/null"), F_OK), -1);
}

static void directories_are_refused(void **state)
{
    char d[512], tmp[512], why[1024] = "";
    FILE *f;

    snprintf(d, sizeof(d), "%s", in_dir("d"));
    snprintf(tmp, sizeof(tmp), "%s", in_dir("made.tmp"));
    assert_int_equal(mkdir(d, 0755), 0);
    assert_int_equal(corun__output_write(d, "x", 1, 0, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "is a directory"));
    assert_int_equal(type_of(d), S_IFDIR);
    assert_int_equal(symlink("d", in_dir("to-d")), 0);
    assert_int_equal(corun__output_write(in_dir("to-d"), "x", 1, 0, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "a directory"));

    /* A finished file made by someone else is renamed over a regular file
     * only; otherwise it is removed. */
    f = fopen(tmp, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(corun__output_commit(tmp, d, why, sizeof(why)), -1);
    assert_int_equal(access(tmp, F_OK), -1);
    assert_int_equal(type_of(d), S_IFDIR);
    f = fopen(tmp, "w");
    assert_non_null(f);
    fputs("pch", f);
    fclose(f);
    assert_int_equal(corun__output_commit(tmp, in_dir("file.pch"), why, sizeof(why)), 0);
    assert_string_equal(read_text(in_dir("file.pch")), "pch");
}

/* In a child with stdout on /dev/full (full = 1) or closed, writes to it
 * or not; returns what corun__stdout_close returned there. */
static int child_stdout_close(int full, int write_something)
{
    pid_t pid;
    int st;

    fflush(stdout); /* the child inherits no pending output */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (full) {
            int fd = open("/dev/full", O_WRONLY);
            if (fd < 0 || dup2(fd, 1) != 1) {
                _exit(99);
            }
            close(fd);
        } else {
            close(1);
        }
        corun__stdio_hold();
        if (write_something) {
            printf("lost\n");
        }
        _exit(corun__stdout_close());
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static void stdout_errors_are_reported(void **state)
{
    assert_int_equal(child_stdout_close(1, 1), ENOSPC);
    assert_int_equal(child_stdout_close(0, 1), EBADF);
    /* Nothing written to a closed stdout: nothing lost. */
    assert_int_equal(child_stdout_close(0, 0), 0);
}

static void closed_descriptors_are_held(void **state)
{
    const char *p = in_dir("store");
    pid_t pid;
    int st;

    fflush(stdout);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd;
        close(1);
        corun__stdio_hold();
        fd = open(p, O_WRONLY | O_CREAT, 0644);
        /* the file did not take stdout's number; stdout still fails */
        _exit(fd == 1 || write(1, "x", 1) == 1 ? 1 : 0);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(regular_files_are_replaced_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(links_are_followed_and_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(fifos_are_written_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(devices_are_not_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(directories_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(stdout_errors_are_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(closed_descriptors_are_held, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
