/* Keeps the olm_operator library non-empty until its first real source lands. */
typedef int operator_placeholder_unused;
