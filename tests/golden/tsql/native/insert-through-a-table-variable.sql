-- native: insert through a table variable
/* queuetop */ DECLARE @qt_out TABLE (qt_0 bigint); INSERT INTO [queuetop].[WorkQueue] ([JobType], [JobInfo], [Priority], [CreatedBy]) OUTPUT inserted.[WorkQueueID] INTO @qt_out VALUES (CAST(? AS nvarchar(128)), CAST(? AS nvarchar(max)), CAST(? AS tinyint), CAST(? AS nvarchar(128))); SELECT * FROM @qt_out;
