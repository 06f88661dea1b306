#!/bin/bash
echo 'Hello, world!' > /app/greeting.txt
