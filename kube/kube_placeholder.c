typedef int kube_placeholder_unused; /* removed when the first kube source lands */
