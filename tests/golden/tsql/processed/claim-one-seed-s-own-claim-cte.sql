-- processed: claim_one seed's own claim (cte)
/* queuetop */ WITH qt_next AS (SELECT TOP (1) * FROM [dbo].[work_items] WITH (READPAST) WHERE ([PROCESSED] = 0) ORDER BY [ID]) UPDATE qt_next SET [PROCESSED] = 1 OUTPUT inserted.[ID], NULL AS qt_type, NULL AS qt_token, NULL AS qt_attempts;
