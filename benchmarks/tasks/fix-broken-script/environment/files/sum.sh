#!/bin/bash
# Prints the sum of its arguments.
total=0
for number in "$@"; do
  total="$total + $number"
done
echo $total
