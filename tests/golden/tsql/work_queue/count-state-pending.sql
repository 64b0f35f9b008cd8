-- work_queue: count_state pending
/* queuetop */ SELECT COUNT(*) FROM [dbo].[work_queue] WITH (NOLOCK) WHERE [processed_flag] = 0;
