typedef int oci_placeholder_unused;
