"""What is kept on disk: history.db, the transcripts, the workspace folders."""
