-- queuesample: state_counts
/* queuetop */ SELECT 'now' AS qt_part, NULL AS qt_type, GETDATE() AS qt_oldest, CAST(NULL AS bigint), CAST(NULL AS bigint) UNION ALL SELECT 'queue', [JobType], MIN([CreatedDate]), COUNT(*), MIN([WorkQueueID]) FROM [QueueSample].[WorkQueue] WITH (NOLOCK) WHERE [RetrievedDate] IS NULL GROUP BY [JobType];
