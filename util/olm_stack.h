/* olm_stack: give back the stack pages a worker thread no longer uses.
 *
 * A thread's stack pages stay resident for the thread's life once a deep call chain has
 * touched them: after a burst of reconciles each pool thread kept 50-100 KiB it only
 * needed at the deepest point of some reconcile (operator-controller's thread stacks: 96
 * KiB idle, 448 KiB after installing and uninstalling 100 extensions).  Everything below
 * the calling frame is dead, so those pages can go back to the kernel; a later deep call
 * gets fresh zero pages (a few page faults). */
#ifndef OLM_STACK_H
#define OLM_STACK_H

/* Releases the calling thread's stack pages below its current frame, keeping a margin
 * for the next calls and signal handlers.  For threads made by pthread_create (libuv's
 * pool); on the main thread, or when the stack cannot be found, it does nothing. */
void olm_stack_release_unused(void);

#endif
