"""What a run concludes: the summary's types, the one place they are built, the verdict, exit codes."""
