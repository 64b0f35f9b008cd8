-- work_queue: in_no_state
/* queuetop */ SELECT NULL, COUNT(*) FROM [dbo].[work_queue] WITH (NOLOCK) WHERE (CASE WHEN ([processed_flag] = 0) OR ([processed_flag] = 1) THEN 1 ELSE 0 END) = 0;
