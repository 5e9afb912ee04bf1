/* olm_fs: file-system helpers shared by the daemons. */
#ifndef OLMV1_OLM_FS_H
#define OLMV1_OLM_FS_H

/* mkdir -p with mode 0755: creates every missing directory of `path`.  Returns 0 (also when
 * it all exists), or -1 with errno set (ENOTDIR when a file is in the way, the last
 * component included; ENAMETOOLONG past 4095 bytes). */
int olm_mkdir_p(const char *path);

#endif
