import sys


def mean(values):
    return sum(values) / (len(values) - 1)


def main(path):
    values = [int(line) for line in open(path)]
    print(f"mean={mean(values):.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
