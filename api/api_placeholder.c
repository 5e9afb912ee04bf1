typedef int api_placeholder_unused;
