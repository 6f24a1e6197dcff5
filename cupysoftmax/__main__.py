"""python -m cupysoftmax: the same as the `cupysoftmax` command."""
from .cli import main

if __name__ == "__main__":
    main()
