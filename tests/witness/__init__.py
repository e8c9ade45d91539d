"""The witness: a second, plain implementation of every published aggregate."""
