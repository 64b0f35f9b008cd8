-- native: server clock
SELECT SYSUTCDATETIME();
