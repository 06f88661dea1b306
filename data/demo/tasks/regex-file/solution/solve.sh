#!/bin/bash
printf '%s\n' '\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])' > /app/date_regex.txt
