"""What programs need installed, kept in the workspace and shown to their sandbox
read-only: the workspace venv that pip fills (``venv``) and the node_modules that npm
fills (``npm``). Installs run outside the sandbox, so only with the user's consent and
only for names from the package indexes."""
