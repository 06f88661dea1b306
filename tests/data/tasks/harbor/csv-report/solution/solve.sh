#!/bin/bash
printf 'a,1\n' > /app/out.txt
