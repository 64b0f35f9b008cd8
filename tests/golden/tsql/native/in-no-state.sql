-- native: in_no_state
/* queuetop */ SELECT [JobType], COUNT(*) FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE (CASE WHEN ([RetrievedDate] IS NULL AND (([AvailableDate] <= SYSUTCDATETIME()) OR ([AvailableDate] > SYSUTCDATETIME()))) OR ([RetrievedDate] IS NOT NULL AND (([TimeoutDate] >= SYSUTCDATETIME()) OR ([TimeoutDate] < SYSUTCDATETIME()))) THEN 1 ELSE 0 END) = 0 GROUP BY [JobType];
